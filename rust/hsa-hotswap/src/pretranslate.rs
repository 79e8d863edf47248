//! Pretranslation (`hotswap cache warm`, `hotswap rewrite --cache`): the
//! rewrite of a code object a later load on an A0 GPU will ask for, stored in
//! the persistent cache under exactly the key that load computes, through the
//! same cache code ([`Store::through_digested`]) and the same output checks
//! ([`rewriter::retarget_with`]).
//!
//! What a load computes, and so what is reproduced here: the ISA pair the
//! gate decides for a gfx1250 A0 agent ([`policy::decide`] with the agent ISA
//! ROCr reports, [`policy::A0_TARGET_ISA`]) from the object's own ISA name; the
//! backend's identity; the tool's identity ([`key::tool_identity`], which the
//! command line takes from the installed tool library with
//! [`key::adopt_tool_identity`]); no COMGR flags (the tool's loads pass none).

use std::path::Path;

use hotswap_code_object::CodeObject;

use crate::config::Config;
use crate::digest::InputDigest;
use crate::policy::{self, AgentTarget};
use crate::rewrite_cache::key;
use crate::rewrite_cache::{Settings, Store};
use crate::rewriter::{self, Backend, Request, RetargetError, Retargeted, RewriteFlags};

/// What a rewrite answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// New bytes, of this size.
    Rewritten(usize),
    /// Nothing to change.
    Unchanged,
    /// Refused, with the rewriter's reason.
    Refused(String),
    /// The backend does not rewrite this pair.
    Unsupported,
}

/// What [`Pretranslator::warm`] did with one code object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Warmed {
    /// Not an object a load on an A0 GPU rewrites (another processor, already
    /// A0 code, unreadable), with why.
    NotCandidate(String),
    /// An answer: found in the cache (`already`), or made and stored now.
    Answered {
        /// The answer.
        answer: Answer,
        /// It was in the cache before.
        already: bool,
    },
    /// The rewrite failed in a way that is not cached (an error, no memory).
    Failed(String),
}

/// A backend and a cache, set up once for many objects (shared by the
/// command line's worker threads).
#[derive(Debug)]
pub struct Pretranslator {
    backend: Box<dyn Backend>,
    identity: String,
    tool: &'static str,
    store: Store,
}

impl Pretranslator {
    /// The backend `config` selects (`backend`, when given, as the value of
    /// `HSA_HOTSWAP_REWRITER` would: `native` or a library's absolute path),
    /// and the cache of `config` or, with `into`, the store directory `into`
    /// ([`Store::open_store_for_writing`]: laid out as a cache directory,
    /// readable by every user, never evicted; loads read it as their
    /// read-only store).
    pub fn new(
        config: &Config,
        backend: Option<&str>,
        into: Option<&Path>,
    ) -> Result<Self, String> {
        let mut chosen = config.clone();
        if let Some(b) = backend {
            chosen.rewriter = Some(b.to_owned());
        }
        let backend = rewriter::select(&chosen)?;
        let identity = backend
            .cache_identity()
            .ok_or_else(|| format!("{} has no persistent identity", backend.describe()))?;
        let tool = key::tool_identity()
            .ok_or("the tool's build cannot be identified (no build-id, no readable file)")?;
        let store = match into {
            Some(dir) => Store::open_store_for_writing(dir)?,
            None => Store::open(&Settings::from_config(
                config,
                crate::rewrite_cache::process_is_secure(),
            ))?,
        };
        Ok(Pretranslator {
            backend,
            identity,
            tool,
            store,
        })
    }

    /// The backend, in one line.
    pub fn backend(&self) -> &str {
        self.backend.describe()
    }

    /// Where the entries go.
    pub fn entries_dir(&self) -> &Path {
        self.store.path()
    }

    /// The answer a load on a gfx1250 A0 GPU would get for `bytes`: from the
    /// cache when it holds one, else rewritten now and stored.
    pub fn warm(&self, bytes: &[u8]) -> Warmed {
        self.answer(bytes).0
    }

    /// [`Pretranslator::warm`], with the rewritten bytes when the answer is
    /// "rewritten" (`hotswap rewrite --cache`).
    pub fn answer(&self, bytes: &[u8]) -> (Warmed, Option<Vec<u8>>) {
        let object = match CodeObject::parse(bytes) {
            Ok(object) => object,
            Err(e) => {
                return (
                    Warmed::NotCandidate(format!("not a code object: {e}")),
                    None,
                )
            }
        };
        let source = match crate::code_object::isa_name(&object) {
            Ok(source) => source,
            Err(e) => {
                return (
                    Warmed::NotCandidate(format!("ISA not identified: {e}")),
                    None,
                )
            }
        };
        let agent = AgentTarget {
            gfx: "gfx1250",
            revision: Some(0),
        };
        let Some(decision) = policy::decide(agent, &source, policy::A0_TARGET_ISA, false) else {
            let why = format!("{source}: not rewritten for gfx1250 A0");
            return (Warmed::NotCandidate(why), None);
        };
        let request = Request {
            source_isa: &decision.source,
            target_isa: &decision.target,
            flags: RewriteFlags::default(),
        };
        let digest = InputDigest::of(bytes);
        let called = std::cell::Cell::new(false);
        let result =
            self.store
                .through_digested(self.tool, &self.identity, &digest, &request, || {
                    called.set(true);
                    rewriter::retarget_with(self.backend.as_ref(), &object, &request)
                });
        let (answer, output) = match result {
            Ok(Retargeted::Changed(new)) => (
                Answer::Rewritten(new.bytes().len()),
                Some(new.bytes().to_vec()),
            ),
            Ok(Retargeted::Unchanged) => (Answer::Unchanged, None),
            Err(RetargetError::Refused(why)) => (Answer::Refused(why), None),
            Err(RetargetError::Unsupported) => (Answer::Unsupported, None),
            Err(e) => return (Warmed::Failed(e.to_string()), None),
        };
        let warmed = Warmed::Answered {
            answer,
            already: !called.get(),
        };
        (warmed, output)
    }
}
