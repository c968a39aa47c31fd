//! openkeel-api
