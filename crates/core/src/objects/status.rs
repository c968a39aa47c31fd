//! Enumerations of `magnum/objects/fields.py`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A string that is not one of an enumeration's valid values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not a valid {kind}")]
pub struct UnknownValue {
    /// The enumeration, e.g. `ClusterStatus`.
    pub kind: &'static str,
    pub value: String,
}

macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant, )+
        }

        impl $name {
            /// Every valid value, in Magnum's declaration order.
            pub const ALL: &'static [$name] = &[ $( $name::$variant ),+ ];

            /// The value as Magnum writes it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownValue;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $( $text => Ok($name::$variant), )+
                    _ => Err(UnknownValue { kind: stringify!($name), value: s.to_string() }),
                }
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.as_str()
            }
        }
    };
}

string_enum! {
    /// `ClusterStatus` (18 values), used for clusters and nodegroups.
    ClusterStatus {
        CreateInProgress = "CREATE_IN_PROGRESS",
        CreateFailed = "CREATE_FAILED",
        CreateComplete = "CREATE_COMPLETE",
        UpdateInProgress = "UPDATE_IN_PROGRESS",
        UpdateFailed = "UPDATE_FAILED",
        UpdateComplete = "UPDATE_COMPLETE",
        DeleteInProgress = "DELETE_IN_PROGRESS",
        DeleteFailed = "DELETE_FAILED",
        DeleteComplete = "DELETE_COMPLETE",
        ResumeComplete = "RESUME_COMPLETE",
        ResumeFailed = "RESUME_FAILED",
        RestoreComplete = "RESTORE_COMPLETE",
        RollbackInProgress = "ROLLBACK_IN_PROGRESS",
        RollbackFailed = "ROLLBACK_FAILED",
        RollbackComplete = "ROLLBACK_COMPLETE",
        SnapshotComplete = "SNAPSHOT_COMPLETE",
        CheckComplete = "CHECK_COMPLETE",
        AdoptComplete = "ADOPT_COMPLETE",
    }
}

impl ClusterStatus {
    /// The "failed" set that drives `faults` (`CREATE_FAILED, UPDATE_FAILED, DELETE_FAILED,
    /// ROLLBACK_FAILED, RESUME_FAILED`).
    pub const FAILED: &'static [ClusterStatus] = &[
        ClusterStatus::CreateFailed,
        ClusterStatus::UpdateFailed,
        ClusterStatus::DeleteFailed,
        ClusterStatus::RollbackFailed,
        ClusterStatus::ResumeFailed,
    ];

    /// The "COMPLETE set" of the conductor's preconditions:
    /// `{CREATE, UPDATE, RESUME, RESTORE, ROLLBACK, SNAPSHOT, CHECK, ADOPT}_COMPLETE`.
    pub const COMPLETE: &'static [ClusterStatus] = &[
        ClusterStatus::CreateComplete,
        ClusterStatus::UpdateComplete,
        ClusterStatus::ResumeComplete,
        ClusterStatus::RestoreComplete,
        ClusterStatus::RollbackComplete,
        ClusterStatus::SnapshotComplete,
        ClusterStatus::CheckComplete,
        ClusterStatus::AdoptComplete,
    ];

    /// The statuses the periodic status sync polls the driver for
    /// (`CREATE_/UPDATE_/DELETE_/ROLLBACK_IN_PROGRESS`).
    pub const IN_PROGRESS: &'static [ClusterStatus] = &[
        ClusterStatus::CreateInProgress,
        ClusterStatus::UpdateInProgress,
        ClusterStatus::DeleteInProgress,
        ClusterStatus::RollbackInProgress,
    ];

    pub fn is_failed(self) -> bool {
        Self::FAILED.contains(&self)
    }

    pub fn is_complete(self) -> bool {
        Self::COMPLETE.contains(&self)
    }

    pub fn is_in_progress(self) -> bool {
        Self::IN_PROGRESS.contains(&self)
    }
}

string_enum! {
    /// `ClusterHealthStatus`.
    ClusterHealthStatus {
        Healthy = "HEALTHY",
        Unhealthy = "UNHEALTHY",
        Unknown = "UNKNOWN",
    }
}

string_enum! {
    /// `FederationStatus`: CREATE/UPDATE/DELETE × IN_PROGRESS/FAILED/COMPLETE.
    FederationStatus {
        CreateInProgress = "CREATE_IN_PROGRESS",
        CreateFailed = "CREATE_FAILED",
        CreateComplete = "CREATE_COMPLETE",
        UpdateInProgress = "UPDATE_IN_PROGRESS",
        UpdateFailed = "UPDATE_FAILED",
        UpdateComplete = "UPDATE_COMPLETE",
        DeleteInProgress = "DELETE_IN_PROGRESS",
        DeleteFailed = "DELETE_FAILED",
        DeleteComplete = "DELETE_COMPLETE",
    }
}

string_enum! {
    /// `ClusterType` (the `coe` of a cluster template); 23.0.0 knows only `kubernetes`.
    /// `cluster_template.coe` is kept as a string in [`super::ClusterTemplate`] so that rows
    /// written by older releases (e.g. `swarm`) can still be read.
    ClusterType {
        Kubernetes = "kubernetes",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_status_has_18_values_and_round_trips() {
        assert_eq!(ClusterStatus::ALL.len(), 18);
        for s in ClusterStatus::ALL {
            assert_eq!(s.as_str().parse::<ClusterStatus>(), Ok(*s));
            assert_eq!(
                serde_json::to_string(s).ok(),
                Some(format!("\"{}\"", s.as_str()))
            );
        }
        assert!("create_complete".parse::<ClusterStatus>().is_err());
    }

    #[test]
    fn status_sets() {
        assert!(ClusterStatus::RollbackFailed.is_failed());
        assert!(!ClusterStatus::DeleteComplete.is_complete());
        assert!(ClusterStatus::AdoptComplete.is_complete());
        assert!(ClusterStatus::RollbackInProgress.is_in_progress());
        assert_eq!(FederationStatus::ALL.len(), 9);
    }
}
