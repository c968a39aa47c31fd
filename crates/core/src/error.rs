//! The error catalogue: Magnum's exceptions (`magnum/common/exception.py`) and the WSME /
//! webob errors that reach clients, each with its class name, HTTP status and message template.
//!
//! Every failure OpenKeel reports to a client is a [`MagnumError`]: a catalogue entry
//! ([`ErrorKind`]) plus the formatted message. The API turns it into Magnum's error envelope
//! in one place; the RPC layer encodes and decodes it by class name, as oslo.messaging does.

use std::fmt;

macro_rules! catalogue {
    ($( $(#[$meta:meta])* $kind:ident => ($class:literal, $parent:literal, $code:literal, $template:literal) ),* $(,)?) => {
        /// One entry of the catalogue. The variant name is the Magnum (or WSME) class name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorKind { $( $(#[$meta])* $kind ),* }

        impl ErrorKind {
            /// Every entry, in catalogue order.
            pub const ALL: &'static [ErrorKind] = &[ $( ErrorKind::$kind ),* ];

            /// The Python class name (`ClusterNotFound`).
            pub fn class_name(self) -> &'static str {
                match self { $( ErrorKind::$kind => $class ),* }
            }

            /// The parent class name in Magnum's hierarchy.
            pub fn parent(self) -> &'static str {
                match self { $( ErrorKind::$kind => $parent ),* }
            }

            /// The class's HTTP status (`code` attribute).
            pub fn code(self) -> u16 {
                match self { $( ErrorKind::$kind => $code ),* }
            }

            /// The `%`-style message template.
            pub fn template(self) -> &'static str {
                match self { $( ErrorKind::$kind => $template ),* }
            }
        }
    };
}

catalogue! {
    MagnumException => ("MagnumException", "Exception", 500, "An unknown exception occurred."),
    ObjectNotFound => ("ObjectNotFound", "MagnumException", 404, "The %(name)s %(id)s could not be found."),
    ProjectNotFound => ("ProjectNotFound", "ObjectNotFound", 404, "The %(name)s %(id)s could not be found."),
    ResourceNotFound => ("ResourceNotFound", "ObjectNotFound", 404, "The %(name)s resource %(id)s could not be found."),
    HTTPNotFound => ("HTTPNotFound", "ResourceNotFound", 404, "The %(name)s resource %(id)s could not be found."),
    AuthorizationFailure => ("AuthorizationFailure", "MagnumException", 403, "%(client)s connection failed. %(message)s"),
    Invalid => ("Invalid", "MagnumException", 400, "Unacceptable parameters."),
    InvalidUUID => ("InvalidUUID", "Invalid", 400, "Expected a uuid but received %(uuid)s."),
    InvalidName => ("InvalidName", "Invalid", 400, "Expected a name but received %(name)s."),
    InvalidIdentity => ("InvalidIdentity", "Invalid", 400, "Expected an uuid or int but received %(identity)s."),
    InvalidCsr => ("InvalidCsr", "Invalid", 400, "Received invalid csr %(csr)s."),
    InvalidParameterValue => ("InvalidParameterValue", "Invalid", 400, "%(err)s"),
    PatchError => ("PatchError", "Invalid", 400, "Couldn't apply patch '%(patch)s'. Reason: %(reason)s"),
    NotAuthorized => ("NotAuthorized", "MagnumException", 403, "Not authorized."),
    PolicyNotAuthorized => ("PolicyNotAuthorized", "NotAuthorized", 403, "Policy doesn't allow %(action)s to be performed."),
    InvalidDNS => ("InvalidDNS", "Invalid", 400, "Expected a single dns address or comma separated dns list, but received %(dns)s."),
    ConfigInvalid => ("ConfigInvalid", "Invalid", 400, "Invalid configuration file. %(error_msg)s"),
    ApiVersionsIntersect => ("ApiVersionsIntersect", "Invalid", 400, "Version of %(name)s %(min_ver)s %(max_ver)s intersects with another versions."),
    Conflict => ("Conflict", "MagnumException", 409, "Conflict."),
    ClusterTemplateNotFound => ("ClusterTemplateNotFound", "ResourceNotFound", 404, "ClusterTemplate %(clustertemplate)s could not be found."),
    ClusterTemplateAlreadyExists => ("ClusterTemplateAlreadyExists", "Conflict", 409, "A ClusterTemplate with UUID %(uuid)s already exists."),
    ClusterTemplateReferenced => ("ClusterTemplateReferenced", "Invalid", 400, "ClusterTemplate %(clustertemplate)s is referenced by one or multiple clusters."),
    ClusterTemplatePublishDenied => ("ClusterTemplatePublishDenied", "NotAuthorized", 403, "Not authorized to set public or hidden flag for cluster template."),
    ClusterNotFound => ("ClusterNotFound", "ResourceNotFound", 404, "Cluster %(cluster)s could not be found."),
    ClusterAlreadyExists => ("ClusterAlreadyExists", "Conflict", 409, "A cluster with UUID %(uuid)s already exists."),
    NotSupported => ("NotSupported", "MagnumException", 400, "%(operation)s is not supported."),
    ClusterTypeNotSupported => ("ClusterTypeNotSupported", "NotSupported", 400, "Cluster type (%(server_type)s, %(os)s, %(coe)s) is not supported by any loaded cluster driver. Loaded drivers support: %(supported_cluster_types)s."),
    ClusterTypeBetaNotEnabled => ("ClusterTypeBetaNotEnabled", "NotSupported", 400, "Cluster type (%(server_type)s, %(os)s, %(coe)s) is provided by the '%(driver_name)s' driver, which is a beta driver and is not enabled. Add '%(driver_name)s' to the [drivers]/enabled_beta_drivers configuration option to use it."),
    ClusterDriverNotSupported => ("ClusterDriverNotSupported", "NotSupported", 400, "Cluster driver (%(driver_name)s) not supported."),
    RequiredParameterNotProvided => ("RequiredParameterNotProvided", "Invalid", 400, "Required parameter %(heat_param)s not provided."),
    OperationInProgress => ("OperationInProgress", "Invalid", 400, "Cluster %(cluster_name)s already has an operation in progress."),
    VolumeTypeNotFound => ("VolumeTypeNotFound", "ResourceNotFound", 400, "Valid volume type could not be found."),
    ImageNotFound => ("ImageNotFound", "ResourceNotFound", 400, "Image %(image_id)s could not be found."),
    ImageNotAuthorized => ("ImageNotAuthorized", "NotAuthorized", 403, "Not authorized for image %(image_id)s."),
    OSDistroFieldNotFound => ("OSDistroFieldNotFound", "ResourceNotFound", 400, "Image %(image_id)s doesn't contain os_distro field."),
    X509KeyPairNotFound => ("X509KeyPairNotFound", "ResourceNotFound", 404, "A key pair %(x509keypair)s could not be found."),
    X509KeyPairAlreadyExists => ("X509KeyPairAlreadyExists", "Conflict", 409, "A key pair with UUID %(uuid)s already exists."),
    CertificateStorageException => ("CertificateStorageException", "MagnumException", 500, "Could not store certificate: %(msg)s"),
    CertificateValidationError => ("CertificateValidationError", "Invalid", 400, "Extension '%(extension)s' not allowed"),
    KeyPairNotFound => ("KeyPairNotFound", "ResourceNotFound", 404, "Unable to find keypair %(keypair)s."),
    MagnumServiceNotFound => ("MagnumServiceNotFound", "ResourceNotFound", 404, "A magnum service %(magnum_service_id)s could not be found."),
    MagnumServiceAlreadyExists => ("MagnumServiceAlreadyExists", "Conflict", 409, "A magnum service with ID %(id)s already exists."),
    UnsupportedK8sQuantityFormat => ("UnsupportedK8sQuantityFormat", "Invalid", 400, "Unsupported quantity format for k8s cluster."),
    FlavorNotFound => ("FlavorNotFound", "ResourceNotFound", 400, "Unable to find flavor %(flavor)s."),
    FixedNetworkNotFound => ("FixedNetworkNotFound", "ResourceNotFound", 400, "Unable to find fixed network %(network)s."),
    FixedSubnetNotFound => ("FixedSubnetNotFound", "ResourceNotFound", 400, "Unable to find fixed subnet %(subnet)s."),
    ExternalNetworkNotFound => ("ExternalNetworkNotFound", "ResourceNotFound", 400, "Unable to find external network %(network)s."),
    QuotaAlreadyExists => ("QuotaAlreadyExists", "Conflict", 409, "Quota for project %(project_id)s already exists for resource %(resource)s."),
    QuotaNotFound => ("QuotaNotFound", "ResourceNotFound", 404, "Quota could not be found: %(msg)s"),
    ResourceLimitExceeded => ("ResourceLimitExceeded", "NotAuthorized", 403, "Resource limit exceeded: %(msg)s"),
    RegionsListFailed => ("RegionsListFailed", "MagnumException", 500, "Failed to list regions."),
    ServicesListFailed => ("ServicesListFailed", "MagnumException", 500, "Failed to list services."),
    CertificatesToClusterFailed => ("CertificatesToClusterFailed", "MagnumException", 500, "Failed to create certificates for Cluster: %(cluster_uuid)s"),
    FederationNotFound => ("FederationNotFound", "ResourceNotFound", 404, "Federation %(federation)s could not be found."),
    FederationAlreadyExists => ("FederationAlreadyExists", "Conflict", 409, "A federation with UUID %(uuid)s already exists."),
    MemberAlreadyExists => ("MemberAlreadyExists", "Conflict", 409, "A cluster with UUID %(uuid)s is already a member of the federation %(federation_name)s."),
    PreDeletionFailed => ("PreDeletionFailed", "Conflict", 409, "Failed to pre-delete resources for cluster %(cluster_uuid)s, error: %(msg)s."),
    NodeGroupAlreadyExists => ("NodeGroupAlreadyExists", "Conflict", 409, "A node group with name %(name)s already exists in the cluster %(cluster_id)s."),
    NodeGroupNotFound => ("NodeGroupNotFound", "ResourceNotFound", 404, "Nodegroup %(nodegroup)s could not be found."),
    MasterNGSizeInvalid => ("MasterNGSizeInvalid", "InvalidParameterValue", 400, "master nodegroup size of %(requested_size)s is invalid, size cannot be an even number."),
    MasterNGResizeNotSupported => ("MasterNGResizeNotSupported", "NotSupported", 400, "Resizing the master nodegroup is not supported by this driver."),
    ZeroNodeCountNotSupported => ("ZeroNodeCountNotSupported", "NotSupported", 400, "Resizing a nodegroup to zero is not supported in the provided microversion."),
    FlavorZeroRootVolumeNotSupported => ("FlavorZeroRootVolumeNotSupported", "NotSupported", 400, "Flavor with zero root volume size is not supported when boot_volume_size is zero."),
    ClusterUpgradeNotSupported => ("ClusterUpgradeNotSupported", "NotSupported", 400, "Cluster upgrade is not supported in the provided microversion."),
    NGResizeOutBounds => ("NGResizeOutBounds", "Invalid", 400, "Resizing %(nodegroup)s outside the allowed range: min_node_count = %(min_nc)s, max_node_count = %(max_nc)s"),
    DeletingDefaultNGNotSupported => ("DeletingDefaultNGNotSupported", "NotSupported", 400, "Deleting a default nodegroup is not supported."),
    NodeGroupInvalidInput => ("NodeGroupInvalidInput", "Conflict", 409, "%(attr)s for %(nodegroup)s is invalid (%(expl)s)."),
    CreateMasterNodeGroup => ("CreateMasterNodeGroup", "NotSupported", 400, "Creating master nodegroups is currently not supported."),
    NgOperationInProgress => ("NgOperationInProgress", "Invalid", 400, "Nodegroup %(nodegroup)s already has an operation in progress."),
    InvalidClusterTemplateForUpgrade => ("InvalidClusterTemplateForUpgrade", "Conflict", 409, "Cluster Template is not valid for upgrade: %(reason)s"),
    ClusterAPIAddressUnavailable => ("ClusterAPIAddressUnavailable", "Conflict", 409, "Cluster API address is not available yet"),
    // Errors that are not Magnum exceptions but reach clients with the same envelope.
    /// WSME `ClientSideError`: 400 with a free text (limit, sort direction, patch rules, JSON).
    ClientSideError => ("ClientSideError", "Exception", 400, "%(msg)s"),
    /// WSME `InvalidInput`.
    InvalidInput => ("InvalidInput", "ClientSideError", 400, "Invalid input for field/attribute %(fieldname)s. Value: '%(value)s'. %(msg)s"),
    /// WSME `MissingArgument`.
    MissingArgument => ("MissingArgument", "ClientSideError", 400, "Missing argument: \"%(argname)s\""),
    /// WSME `UnknownArgument`.
    UnknownArgument => ("UnknownArgument", "ClientSideError", 400, "Unknown argument: \"%(argname)s\""),
    /// WSME `UnknownAttribute`.
    UnknownAttribute => ("UnknownAttribute", "ClientSideError", 400, "Unknown attribute(s) for argument %(fieldname)s: %(attributes)s"),
    /// WSME: a body of an unsupported media type.
    UnsupportedMediaType => ("UnsupportedMediaType", "ClientSideError", 415, "Unknown mimetype: %(mimetype)s"),
    /// oslo.messaging: a call that got no reply in time.
    MessagingTimeout => ("MessagingTimeout", "Exception", 500, "Timed out waiting for a reply to message ID %(msg_id)s"),
    /// OpenKeel: the RPC transport could not publish in time (Magnum would hang or 500).
    ServiceUnavailable => ("ServiceUnavailable", "MagnumException", 503, "%(msg)s"),
}

/// A failure to report: a catalogue entry, its formatted message and its HTTP status
/// (normally the class's, but some Magnum handlers override it, e.g. `ClusterTemplateNotFound`
/// → 400 on cluster create before 1.10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MagnumError {
    kind: ErrorKind,
    code: u16,
    message: String,
    /// The keyword arguments it was raised with, in order (`exception.kwargs` without
    /// `code`), as `str()` of each value: oslo.messaging sends them in a failure reply.
    kwargs: Vec<(String, String)>,
}

impl MagnumError {
    /// Format the kind's template with keyword arguments, as Magnum's
    /// `MagnumException.__init__` does: if a key is missing the raw template is used.
    pub fn new(kind: ErrorKind, kwargs: &[(&str, &dyn fmt::Display)]) -> Self {
        let message =
            format_template(kind.template(), kwargs).unwrap_or_else(|| kind.template().to_string());
        MagnumError {
            kind,
            code: kind.code(),
            message,
            kwargs: kwargs
                .iter()
                .map(|(k, v)| ((*k).to_string(), v.to_string()))
                .collect(),
        }
    }

    /// A message passed positionally: it replaces the template.
    pub fn with_message(kind: ErrorKind, message: impl Into<String>) -> Self {
        MagnumError {
            kind,
            code: kind.code(),
            message: message.into(),
            kwargs: Vec::new(),
        }
    }

    /// The keyword arguments it was raised with (not `code`).
    pub fn kwargs(&self) -> &[(String, String)] {
        &self.kwargs
    }

    /// Record the keyword arguments (for an error whose message was formatted elsewhere).
    pub fn with_kwargs(mut self, kwargs: Vec<(String, String)>) -> Self {
        self.kwargs = kwargs;
        self
    }

    /// The `%(name)s` placeholders of the kind's message template, in order.
    pub fn template_names(kind: ErrorKind) -> Vec<&'static str> {
        let t = kind.template();
        let mut out = Vec::new();
        let mut rest = t;
        while let Some(i) = rest.find("%(") {
            let after = &rest[i + 2..];
            match after.find(")s") {
                Some(j) => {
                    out.push(&after[..j]);
                    rest = &after[j + 2..];
                }
                None => break,
            }
        }
        out
    }

    /// Override the HTTP status, as some Magnum handlers do before re-raising.
    pub fn with_code(mut self, code: u16) -> Self {
        self.code = code;
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn code(&self) -> u16 {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The Python class name, as oslo.messaging encodes remote exceptions.
    pub fn class_name(&self) -> &'static str {
        self.kind.class_name()
    }

    /// Look an entry up by its Python class name (for decoding remote errors).
    pub fn kind_by_class_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL
            .iter()
            .copied()
            .find(|k| k.class_name() == name)
    }

    // Shorthands for the most common entries.

    pub fn invalid_parameter(err: impl fmt::Display) -> Self {
        Self::new(ErrorKind::InvalidParameterValue, &[("err", &err)])
    }

    pub fn client_side(msg: impl Into<String>) -> Self {
        Self::with_message(ErrorKind::ClientSideError, msg)
    }

    pub fn policy_not_authorized(action: &str) -> Self {
        Self::new(ErrorKind::PolicyNotAuthorized, &[("action", &action)])
    }

    pub fn internal(msg: impl Into<String>) -> Self {
        Self::with_message(ErrorKind::MagnumException, msg)
    }
}

impl fmt::Display for MagnumError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MagnumError {}

/// Python `%`-formatting of `%(name)s` placeholders (and `%%`). Returns `None` when a
/// placeholder has no argument, so that the caller can fall back to the raw template as
/// Magnum does.
pub fn format_template(template: &str, kwargs: &[(&str, &dyn fmt::Display)]) -> Option<String> {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(pos) = rest.find('%') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(stripped) = after.strip_prefix('%') {
            out.push('%');
            rest = stripped;
        } else if let Some(inner) = after.strip_prefix('(') {
            let close = inner.find(')')?;
            let name = &inner[..close];
            let spec = inner[close + 1..].chars().next()?;
            if spec != 's' && spec != 'd' && spec != 'r' {
                return None;
            }
            let (_, value) = kwargs.iter().find(|(k, _)| *k == name)?;
            if spec == 'r' {
                out.push_str(&format!("'{value}'"));
            } else {
                out.push_str(&value.to_string());
            }
            rest = &inner[close + 2..];
        } else {
            // A lone '%' followed by something else: Python would fail; keep the template.
            return None;
        }
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_templates() {
        let e = MagnumError::new(ErrorKind::ClusterNotFound, &[("cluster", &"c1")]);
        assert_eq!(e.message(), "Cluster c1 could not be found.");
        assert_eq!(e.code(), 404);
        assert_eq!(e.class_name(), "ClusterNotFound");
    }

    #[test]
    fn missing_argument_keeps_raw_template() {
        let e = MagnumError::new(ErrorKind::HTTPNotFound, &[]);
        assert_eq!(
            e.message(),
            "The %(name)s resource %(id)s could not be found."
        );
    }

    #[test]
    fn positional_message_replaces_template() {
        let e = MagnumError::with_message(
            ErrorKind::Conflict,
            "Multiple clusters exist with same name. Please use the cluster uuid instead.",
        );
        assert_eq!(e.code(), 409);
        assert!(e.message().starts_with("Multiple clusters"));
    }

    #[test]
    fn code_override() {
        let e = MagnumError::new(
            ErrorKind::ClusterTemplateNotFound,
            &[("clustertemplate", &"t")],
        )
        .with_code(400);
        assert_eq!(e.code(), 400);
        assert_eq!(e.kind().code(), 404);
    }

    #[test]
    fn class_names_are_unique_and_found() {
        for k in ErrorKind::ALL {
            assert_eq!(MagnumError::kind_by_class_name(k.class_name()), Some(*k));
        }
        assert_eq!(MagnumError::kind_by_class_name("Nope"), None);
    }

    #[test]
    fn percent_escapes_and_repr() {
        assert_eq!(
            format_template("100%% of %(x)s", &[("x", &"y")]).as_deref(),
            Some("100% of y")
        );
        assert_eq!(format_template("bad %d", &[]), None);
    }

    #[test]
    fn statuses_match_catalogue() {
        assert_eq!(ErrorKind::KeyPairNotFound.code(), 404);
        assert_eq!(ErrorKind::FlavorNotFound.code(), 400);
        assert_eq!(ErrorKind::NodeGroupInvalidInput.code(), 409);
        assert_eq!(ErrorKind::ResourceLimitExceeded.code(), 403);
        assert_eq!(ErrorKind::UnsupportedMediaType.code(), 415);
    }
}
