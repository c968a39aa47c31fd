//! openkeel-auth
