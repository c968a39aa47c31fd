//! The addon charts and their rendering with `helm template`, as magnum-cluster-api does
//! (its Rust `helm::template` and Python `TemplateReleaseCommand` both run the `helm`
//! program on the charts in its package).
//!
//! The charts (`crates/driver-capi/charts`, the versions magnum-cluster-api 0.38.2 ships) are
//! embedded in the program and written once to a private directory at the first rendering,
//! so a deployment needs only the `helm` program (`[capi_client] helm_binary`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use openkeel_drivers::{DriverError, DriverResult};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio::sync::OnceCell;

use crate::addons::HelmRelease;
use crate::driver::ChartRenderer;

include!(concat!(env!("OUT_DIR"), "/charts.rs"));

/// The embedded file `path` (relative to `charts/`, e.g. `cilium/values.yaml`).
pub fn chart_file(path: &str) -> Option<&'static [u8]> {
    CHART_FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, b)| *b)
}

/// Writes every embedded chart under `root` (`root/<chart>/...`).
pub fn extract_charts(root: &Path) -> std::io::Result<()> {
    for (rel, bytes) in CHART_FILES {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, bytes)?;
    }
    Ok(())
}

/// The longest part of helm's error output kept in a status reason.
const MAX_STDERR: usize = 2000;

/// `helm template --namespace <ns> --values - <release> <chart>` with the values on stdin.
#[derive(Debug)]
pub struct HelmTemplate {
    binary: PathBuf,
    /// The charts, written on first use (an API process never renders).
    charts: OnceCell<tempfile::TempDir>,
    timeout: Duration,
}

impl HelmTemplate {
    /// `binary` is run for each rendering, which may take up to `timeout`.
    pub fn new(binary: impl Into<PathBuf>, timeout: Duration) -> Self {
        HelmTemplate {
            binary: binary.into(),
            charts: OnceCell::new(),
            timeout,
        }
    }

    /// The directory the charts were written to, writing them on first use.
    pub async fn charts_dir(&self) -> DriverResult<&Path> {
        let dir = self
            .charts
            .get_or_try_init(|| async {
                let dir = tempfile::Builder::new()
                    .prefix("openkeel-charts-")
                    .tempdir()?;
                let path = dir.path().to_path_buf();
                tokio::task::spawn_blocking(move || extract_charts(&path))
                    .await
                    .map_err(std::io::Error::other)??;
                Ok::<_, std::io::Error>(dir)
            })
            .await
            .map_err(|e| {
                DriverError::permanent_message(format!(
                    "Cannot write the Cluster API driver's charts to a temporary directory: {e}"
                ))
            })?;
        Ok(dir.path())
    }

    async fn run(&self, release: &HelmRelease) -> DriverResult<String> {
        let chart = self.charts_dir().await?.join(release.chart);
        if !chart.join("Chart.yaml").is_file() {
            return Err(DriverError::permanent_message(format!(
                "The Cluster API driver carries no chart {}.",
                release.chart
            )));
        }
        let values = serde_json::to_vec(&release.values).map_err(|e| {
            DriverError::permanent_message(format!(
                "Cannot encode the {} values: {e}",
                release.chart
            ))
        })?;
        let mut child = Command::new(&self.binary)
            .arg("template")
            .arg("--namespace")
            .arg(&release.namespace)
            .arg("--values")
            .arg("-")
            .arg(&release.release)
            .arg(&chart)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                DriverError::permanent_message(format!(
                    "Cannot run {} to render the {} chart: {e} (set [capi_client] helm_binary).",
                    self.binary.display(),
                    release.chart
                ))
            })?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(&values).await.map_err(|e| {
                DriverError::transient(format!("Cannot hand the values to helm: {e}"))
            })?;
        }
        let output = child.wait_with_output().await.map_err(|e| {
            DriverError::transient(format!("helm template {} failed: {e}", release.chart))
        })?;
        if !output.status.success() {
            let mut err = String::from_utf8_lossy(&output.stderr).trim().to_string();
            if err.len() > MAX_STDERR {
                let mut cut = MAX_STDERR;
                while !err.is_char_boundary(cut) {
                    cut -= 1;
                }
                err.truncate(cut);
            }
            return Err(DriverError::permanent_message(format!(
                "helm template of the {} chart failed: {err}",
                release.chart
            )));
        }
        String::from_utf8(output.stdout).map_err(|e| {
            DriverError::permanent_message(format!(
                "helm template of the {} chart wrote invalid UTF-8: {e}",
                release.chart
            ))
        })
    }
}

#[async_trait]
impl ChartRenderer for HelmTemplate {
    async fn render(&self, release: &HelmRelease) -> DriverResult<String> {
        match tokio::time::timeout(self.timeout, self.run(release)).await {
            Ok(r) => r,
            // the child is killed when its future is dropped (kill_on_drop)
            Err(_) => Err(DriverError::transient(format!(
                "helm template of the {} chart took longer than {} s",
                release.chart,
                self.timeout.as_secs()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_charts_are_embedded() {
        for chart in [
            "cilium",
            "cluster-autoscaler",
            "k8s-keystone-auth",
            "openstack-cinder-csi",
            "openstack-cloud-controller-manager",
        ] {
            assert!(
                chart_file(&format!("{chart}/Chart.yaml")).is_some(),
                "{chart}"
            );
            assert!(
                chart_file(&format!("{chart}/values.yaml")).is_some(),
                "{chart}"
            );
        }
        // the CCM chart's dependency is carried too
        assert!(CHART_FILES
            .iter()
            .any(|(p, _)| p.starts_with("openstack-cloud-controller-manager/charts/common/")));
    }

    #[tokio::test]
    async fn a_missing_helm_is_a_permanent_error_naming_the_option() {
        let h = HelmTemplate::new("/nonexistent/helm", Duration::from_secs(5));
        assert!(h
            .charts_dir()
            .await
            .unwrap()
            .join("cilium/Chart.yaml")
            .is_file());
        let r = HelmRelease {
            key: "cilium.yaml",
            chart: "cilium",
            release: "cilium".into(),
            namespace: "kube-system".into(),
            values: serde_json::json!({}),
            post: Default::default(),
        };
        let e = h.render(&r).await.unwrap_err();
        assert!(!e.is_transient());
        assert!(e.message().contains("helm_binary"), "{}", e.message());
    }
}
