//! What the tool knows about each agent: device type, first ISA name, processor
//! and ASIC revision, queried once per handle through the table's saved functions
//! (`hsa_agent_get_info_fn`, `hsa_agent_iterate_isas_fn`, `hsa_isa_get_info_alt_fn`)
//! and cached. Failures are cached too: a failed revision query is never A0.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::hsa::api::{
    hsa_agent_t, Originals, HSA_AGENT_INFO_DEVICE, HSA_AMD_AGENT_INFO_ASIC_REVISION,
    HSA_DEVICE_TYPE_GPU,
};
use crate::policy::AgentTarget;

/// One agent as the tool sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentInfo {
    /// `hsa_agent_t.handle`.
    pub handle: u64,
    /// True for `HSA_DEVICE_TYPE_GPU`.
    pub is_gpu: bool,
    /// The first ISA's name, empty when the agent has none (CPU agents).
    pub isa_name: String,
    /// The processor in `isa_name` (`gfx1250`), extracted once.
    pub gfx: String,
    /// `HSA_AMD_AGENT_INFO_ASIC_REVISION`, `None` when the query failed.
    pub revision: Option<u32>,
    /// Some code object could be rewritten for this agent
    /// ([`crate::policy::has_candidate`] with the session's opt-in), decided once.
    pub candidate: bool,
}

impl AgentInfo {
    /// The processor and revision the policy looks at.
    pub fn target(&self) -> AgentTarget<'_> {
        AgentTarget {
            gfx: &self.gfx,
            revision: self.revision,
        }
    }

    /// `rev 0 (A0)`, `rev 1`… for a known revision, `rev unknown` otherwise
    /// (for log lines; the A0 stepping is named for gfx1250 agents only).
    pub fn stepping(&self) -> String {
        match self.revision {
            Some(0) if crate::policy::gate_allows(self.target()) => "rev 0 (A0)".to_owned(),
            Some(r) => format!("rev {r}"),
            None => "rev unknown".to_owned(),
        }
    }

    fn query(queries: &Originals, agent: hsa_agent_t, opt_in: bool) -> AgentInfo {
        let is_gpu =
            queries.agent_info_u32(agent, HSA_AGENT_INFO_DEVICE) == Ok(HSA_DEVICE_TYPE_GPU);
        let isa_name = if is_gpu {
            queries.first_isa_name(agent).unwrap_or_default()
        } else {
            String::new()
        };
        let revision = if is_gpu {
            queries
                .agent_info_u32(agent, HSA_AMD_AGENT_INFO_ASIC_REVISION)
                .ok()
        } else {
            None
        };
        let mut info = AgentInfo {
            handle: agent.handle,
            is_gpu,
            gfx: hotswap_code_object::isa_name::processor_of(&isa_name).to_owned(),
            isa_name,
            revision,
            candidate: false,
        };
        info.candidate = crate::policy::has_candidate(info.target(), opt_in);
        log::debug!(
            "agent {:#x}: {}, first ISA {}, {}",
            info.handle,
            if info.is_gpu { "gpu" } else { "non-gpu" },
            if info.isa_name.is_empty() {
                "(none)"
            } else {
                &info.isa_name
            },
            info.stepping()
        );
        info
    }
}

/// The per-`OnLoad` agent cache.
#[derive(Debug, Default)]
pub struct Agents {
    by_handle: Mutex<HashMap<u64, Arc<AgentInfo>>>,
    all: OnceLock<Vec<Arc<AgentInfo>>>,
    /// `AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES` of the session (decides
    /// [`AgentInfo::candidate`]).
    opt_in: bool,
}

impl Agents {
    /// An empty cache for a session with this opt-in.
    pub fn new(opt_in: bool) -> Agents {
        Agents {
            opt_in,
            ..Agents::default()
        }
    }

    /// The agent behind `agent`, queried on first use (no lock held while querying).
    pub fn get(&self, queries: &Originals, agent: hsa_agent_t) -> Arc<AgentInfo> {
        // Lock-free for every agent the runtime listed (the usual case).
        if let Some(info) = self
            .all
            .get()
            .and_then(|all| all.iter().find(|a| a.handle == agent.handle))
        {
            return Arc::clone(info);
        }
        if let Some(info) = self.lock().get(&agent.handle) {
            return Arc::clone(info);
        }
        let info = Arc::new(AgentInfo::query(queries, agent, self.opt_in));
        Arc::clone(self.lock().entry(agent.handle).or_insert(info))
    }

    /// The agent, if `hsa_iterate_agents` listed it (lock-free, no reference count).
    pub fn listed(&self, handle: u64) -> Option<&AgentInfo> {
        self.all
            .get()?
            .iter()
            .find(|a| a.handle == handle)
            .map(|a| &**a)
    }

    /// Every agent of the runtime (`hsa_iterate_agents_fn`), queried once.
    /// An iteration failure gives an empty list: no rewrite is then possible.
    /// Computed without holding any lock while ROCr runs: two threads racing on
    /// the first call may both query (same answer); the first result is kept.
    pub fn all(&self, queries: &Originals) -> &[Arc<AgentInfo>] {
        if let Some(all) = self.all.get() {
            return all;
        }
        let list = match queries.agents() {
            Ok(list) => list.into_iter().map(|a| self.get(queries, a)).collect(),
            Err(status) => {
                log::warn!("hsa_iterate_agents failed (status {status:#x}); no code object will be rewritten");
                Vec::new()
            }
        };
        let _ = self.all.set(list);
        self.all.get().map_or(&[], Vec::as_slice)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<AgentInfo>>> {
        // A panic elsewhere cannot leave the map inconsistent (single inserts).
        self.by_handle.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stepping_names() {
        let mut a = AgentInfo {
            handle: 1,
            is_gpu: true,
            isa_name: "amdgcn-amd-amdhsa--gfx1250".into(),
            gfx: "gfx1250".into(),
            revision: Some(0),
            candidate: true,
        };
        assert_eq!(a.stepping(), "rev 0 (A0)");
        assert_eq!(
            a.target(),
            AgentTarget {
                gfx: "gfx1250",
                revision: Some(0)
            }
        );
        a.revision = Some(1);
        assert_eq!(a.stepping(), "rev 1");
        a.revision = None;
        assert_eq!(a.stepping(), "rev unknown");
    }
}
