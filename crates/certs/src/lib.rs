//! openkeel-certs
