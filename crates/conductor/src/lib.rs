//! openkeel-conductor
