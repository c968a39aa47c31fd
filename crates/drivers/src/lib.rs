//! openkeel-drivers
