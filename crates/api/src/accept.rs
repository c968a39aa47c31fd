//! `Accept` header handling: whether a response may be JSON at all (WSME/pecan answer 406
//! otherwise) and whether webob would render an error as JSON (then Magnum's envelope carries
//! a title and detail) or as HTML (then both are empty).

/// One media range with its quality.
#[derive(Debug, Clone, PartialEq)]
struct Range {
    kind: String,
    subtype: String,
    q: f32,
}

fn parse(header: &str) -> Vec<Range> {
    header
        .split(',')
        .filter_map(|part| {
            let mut pieces = part.split(';');
            let media = pieces.next()?.trim().to_ascii_lowercase();
            if media.is_empty() {
                return None;
            }
            let (kind, subtype) = media.split_once('/')?;
            let mut q = 1.0f32;
            for p in pieces {
                if let Some((k, v)) = p.split_once('=') {
                    if k.trim().eq_ignore_ascii_case("q") {
                        q = v.trim().parse().unwrap_or(0.0);
                    }
                }
            }
            Some(Range {
                kind: kind.trim().to_string(),
                subtype: subtype.trim().to_string(),
                q,
            })
        })
        .collect()
}

/// The quality the ranges give an offer: the most specific matching range wins.
fn quality(ranges: &[Range], offer: &str) -> f32 {
    let (ok, os) = offer.split_once('/').unwrap_or((offer, ""));
    let mut best: Option<(u8, f32)> = None;
    for r in ranges {
        let specificity = if r.kind == ok && r.subtype == os {
            3
        } else if r.kind == ok && r.subtype == "*" {
            2
        } else if r.kind == "*" && r.subtype == "*" {
            1
        } else {
            continue;
        };
        if best.is_none_or(|(s, _)| specificity > s) {
            best = Some((specificity, r.q));
        }
    }
    best.map(|(_, q)| q).unwrap_or(0.0)
}

/// Whether the client admits `application/json` (absent or empty header: yes).
pub fn admits_json(header: Option<&str>) -> bool {
    match header {
        None => true,
        Some(h) if h.trim().is_empty() => true,
        Some(h) => quality(&parse(h), "application/json") > 0.0,
    }
}

/// Whether webob's `HTTPException` would render as JSON: its first acceptable offer among
/// `text/html`, `application/json` (by quality, ties in that order) is JSON.
pub fn prefers_json(header: Option<&str>) -> bool {
    let Some(h) = header else { return false };
    let ranges = parse(h);
    let html = quality(&ranges, "text/html");
    let json = quality(&ranges, "application/json");
    json > 0.0 && json > html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits() {
        for h in [
            None,
            Some(""),
            Some("*/*"),
            Some("application/*"),
            Some("application/json"),
            Some("text/html, application/json;q=0.1"),
        ] {
            assert!(admits_json(h), "{h:?}");
        }
        for h in [
            "text/html",
            "text/*",
            "text/plain",
            "application/xml",
            "application/vnd.openstack.magnum.v1+json",
            "application/json;q=0",
        ] {
            assert!(!admits_json(Some(h)), "{h}");
        }
    }

    #[test]
    fn prefers() {
        assert!(prefers_json(Some("application/json")));
        assert!(!prefers_json(Some("*/*")));
        assert!(!prefers_json(None));
        assert!(!prefers_json(Some("text/html")));
        assert!(prefers_json(Some("text/html;q=0.5, application/json")));
    }
}
