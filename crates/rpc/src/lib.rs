//! openkeel-rpc
