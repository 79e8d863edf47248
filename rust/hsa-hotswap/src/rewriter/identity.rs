//! How a rewriter backend that lives in a library is identified across
//! processes (for the persistent cache's key): the library file's path, size,
//! modification time, inode and device.

/// `path` named by path, size, modification time (ns), inode and device; `None`
/// when it cannot be read.
pub fn file_identity(path: &str) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some(format!(
        "{path}\0{}\0{}.{:09}\0{}\0{}",
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ino(),
        meta.dev()
    ))
}

/// The identity of a backend loaded from a library: its description and the
/// file that holds `address` (one of its functions), named by path, size,
/// modification time, inode and device. `None` when the file cannot be found
/// (then the backend is not cached).
pub fn library_identity(describe: &str, address: usize) -> Option<String> {
    let path = crate::dl::object_of(address)?;
    Some(format!("{describe}\0{}", file_identity(&path)?))
}
