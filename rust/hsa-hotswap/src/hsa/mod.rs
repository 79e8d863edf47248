//! ROCr's side of the tool ABI: the API-table layout of `hsa_api_trace.h`
//! ([`table`]) and typed calls through the functions saved from it ([`api`]).

pub mod api;
pub mod patch;
pub mod table;
