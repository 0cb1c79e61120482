//! Who holds a lease and which source a build comes from, as the fronts
//! show them: the lease views (view.rs) and the pool views (pool.rs) both
//! name a holder and an identity, so both take them from here, below
//! them.

use natives_core::view::number;
use serde::Serialize;

use super::path::lossy;
use crate::{fresh::Identity, lease::Owner};

/// Who holds (or held) a lease: the job, and the process.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseOwnerView {
    /// The run (a job of the orchestrator) the holder belongs to.
    pub run: String,
    /// The node (task) within the run.
    pub node: String,
    /// The seat (role) within the node.
    pub seat: String,
    /// The holder's process id.
    pub pid: u32,
    /// The worktree the build's source comes from, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// The commit the build's source is at, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// The holder's host name.
    pub host: String,
    /// The holder's machine id, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    /// The boot the holder started in, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
    /// The holder's start time in clock ticks since boot (with `pid` and
    /// `bootId`, immune to pid reuse).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_time: Option<i64>,
    /// Names this acquisition; release deletes only a record carrying it.
    pub nonce: String,
}

impl From<&Owner> for LeaseOwnerView {
    fn from(owner: &Owner) -> LeaseOwnerView {
        LeaseOwnerView {
            run: owner.run.clone(),
            node: owner.node.clone(),
            seat: owner.seat.clone(),
            pid: owner.pid,
            worktree: owner.worktree.as_deref().map(lossy),
            head: owner.head.clone(),
            host: owner.host.clone(),
            machine_id: owner.machine_id.clone(),
            boot_id: owner.boot_id.clone(),
            start_time: owner.start_time.map(number),
            nonce: owner.nonce.clone(),
        }
    }
}

/// The source a build comes from (also how the addon is told one).
#[cfg_attr(feature = "napi", napi_derive::napi(object))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IdentityView {
    /// The worktree the build runs in (compared by canonical path).
    pub worktree: String,
    /// The commit checked out there.
    pub head: String,
}

impl From<&Identity> for IdentityView {
    fn from(identity: &Identity) -> IdentityView {
        IdentityView {
            worktree: lossy(&identity.worktree),
            head: identity.head.clone(),
        }
    }
}

impl From<IdentityView> for Identity {
    fn from(identity: IdentityView) -> Identity {
        Identity {
            worktree: identity.worktree.into(),
            head: identity.head,
        }
    }
}
