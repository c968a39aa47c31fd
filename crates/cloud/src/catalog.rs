//! The Keystone v3 service catalogue of a token, and endpoint selection with keystoneauth's
//! rules (`keystoneauth1/access/service_catalog.py`, `ServiceCatalogV3`): interfaces
//! normalised (`publicURL` → `public`), region matched against `region_id` or `region`,
//! endpoints without a URL skipped, the first endpoint of the best interface wins, and the
//! same error texts (`publicURL endpoint for image service in RegionOne region not found`,
//! `The service catalog is empty.`).

use serde_json::Value;

/// The `catalog` list of a v3 token body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    services: Vec<Value>,
}

/// One endpoint picked from the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub url: String,
    pub interface: String,
    pub region: Option<String>,
}

impl Catalog {
    /// The catalogue of a token body as Keystone returns it (`{"token": {"catalog": [...]}}`)
    /// or as keystonemiddleware stores it in `keystone.token_info` (the same shape). A body
    /// without a catalogue gives an empty one.
    pub fn from_token_body(body: &Value) -> Catalog {
        let token = body.get("token").unwrap_or(body);
        let services = token
            .get("catalog")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Catalog { services }
    }

    pub fn is_empty(&self) -> bool {
        self.services.is_empty()
    }

    /// keystoneauth's `ServiceCatalogV3.normalize_interface`: Python's `rstrip('URL')`.
    pub fn normalize_interface(interface: &str) -> String {
        interface.trim_end_matches(['U', 'R', 'L']).to_string()
    }

    /// `session.get_endpoint(service_type=..., interface=..., region_name=...)`. The error is
    /// keystoneauth's `EndpointNotFound` / `EmptyCatalog` text.
    pub fn endpoint(
        &self,
        service_type: &str,
        interface: &str,
        region_name: Option<&str>,
    ) -> Result<Endpoint, String> {
        if self.services.is_empty() {
            return Err("The service catalog is empty.".to_string());
        }
        let wanted = if interface.is_empty() {
            None
        } else {
            Some(Self::normalize_interface(interface))
        };
        let region_name = region_name.filter(|r| !r.is_empty());
        let mut first: Option<Endpoint> = None;
        for service in &self.services {
            if service.get("type").and_then(Value::as_str) != Some(service_type) {
                continue;
            }
            let endpoints = service
                .get("endpoints")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            for ep in endpoints {
                let iface = ep
                    .get("interface")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if let Some(w) = &wanted {
                    if iface != w {
                        continue;
                    }
                }
                let region = ep
                    .get("region_id")
                    .and_then(Value::as_str)
                    .filter(|r| !r.is_empty())
                    .or_else(|| ep.get("region").and_then(Value::as_str))
                    .map(str::to_string);
                if let Some(r) = region_name {
                    if region.as_deref() != Some(r) {
                        continue;
                    }
                }
                let url = ep.get("url").and_then(Value::as_str).unwrap_or_default();
                if url.is_empty() {
                    continue;
                }
                if first.is_none() {
                    first = Some(Endpoint {
                        url: url.to_string(),
                        interface: iface.to_string(),
                        region,
                    });
                }
            }
        }
        first.ok_or_else(|| match region_name {
            Some(r) => {
                format!("{interface} endpoint for {service_type} service in {r} region not found")
            }
            None => format!("{interface} endpoint for {service_type} service not found"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog() -> Catalog {
        Catalog::from_token_body(&json!({"token": {"catalog": [
            {"type": "compute", "id": "c", "name": "nova", "endpoints": [
                {"interface": "internal", "region_id": "RegionOne", "region": "RegionOne", "url": "http://int/compute"},
                {"interface": "public", "region_id": "RegionTwo", "region": "RegionTwo", "url": "http://two/compute"},
                {"interface": "public", "region_id": "RegionOne", "region": "RegionOne", "url": "http://one/compute"}
            ]},
            {"type": "image", "id": "i", "name": "glance", "endpoints": [
                {"interface": "public", "region": "RegionOne", "url": ""},
                {"interface": "public", "region": "RegionOne", "url": "http://one/image"}
            ]}
        ]}}))
    }

    #[test]
    fn interface_normalisation_is_rstrip() {
        assert_eq!(Catalog::normalize_interface("publicURL"), "public");
        assert_eq!(Catalog::normalize_interface("internalURL"), "internal");
        assert_eq!(Catalog::normalize_interface("admin"), "admin");
    }

    #[test]
    fn picks_by_interface_and_region() {
        let c = catalog();
        let e = c.endpoint("compute", "publicURL", Some("RegionOne")).ok();
        assert_eq!(e.map(|e| e.url).as_deref(), Some("http://one/compute"));
        let e = c.endpoint("compute", "publicURL", None).ok();
        assert_eq!(e.map(|e| e.url).as_deref(), Some("http://two/compute"));
        let e = c.endpoint("compute", "internalURL", Some("RegionOne")).ok();
        assert_eq!(e.map(|e| e.url).as_deref(), Some("http://int/compute"));
        let e = c.endpoint("image", "public", Some("RegionOne")).ok();
        assert_eq!(e.map(|e| e.url).as_deref(), Some("http://one/image"));
    }

    #[test]
    fn keystoneauth_error_texts() {
        let c = catalog();
        assert_eq!(
            c.endpoint("network", "publicURL", Some("RegionOne")),
            Err("publicURL endpoint for network service in RegionOne region not found".into())
        );
        assert_eq!(
            c.endpoint("compute", "adminURL", None),
            Err("adminURL endpoint for compute service not found".into())
        );
        assert_eq!(
            Catalog::default().endpoint("image", "publicURL", None),
            Err("The service catalog is empty.".into())
        );
        assert!(Catalog::from_token_body(&json!({"token": {}})).is_empty());
    }
}
