//! openkeel-db
