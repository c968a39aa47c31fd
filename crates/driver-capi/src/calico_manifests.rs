/// The Calico manifests shipped with the driver, by `calico_tag` (manifests/calico).
pub const CALICO_MANIFESTS: &[(&str, &str)] = &[
    ("v3.24.2", include_str!("../manifests/calico/v3.24.2.yaml")),
    ("v3.25.2", include_str!("../manifests/calico/v3.25.2.yaml")),
    ("v3.26.5", include_str!("../manifests/calico/v3.26.5.yaml")),
    ("v3.27.4", include_str!("../manifests/calico/v3.27.4.yaml")),
    ("v3.28.2", include_str!("../manifests/calico/v3.28.2.yaml")),
    ("v3.29.0", include_str!("../manifests/calico/v3.29.0.yaml")),
    ("v3.29.2", include_str!("../manifests/calico/v3.29.2.yaml")),
    ("v3.29.3", include_str!("../manifests/calico/v3.29.3.yaml")),
    ("v3.30.0", include_str!("../manifests/calico/v3.30.0.yaml")),
    ("v3.30.1", include_str!("../manifests/calico/v3.30.1.yaml")),
    ("v3.30.2", include_str!("../manifests/calico/v3.30.2.yaml")),
    ("v3.31.3", include_str!("../manifests/calico/v3.31.3.yaml")),
    ("v3.31.5", include_str!("../manifests/calico/v3.31.5.yaml")),
    ("v3.32.0", include_str!("../manifests/calico/v3.32.0.yaml")),
    ("v3.32.1", include_str!("../manifests/calico/v3.32.1.yaml")),
];
