use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// A row of `x509keypair` (`magnum/db/sqlalchemy/models.py`), in MariaDB column order. Certificate and key
/// columns hold PEM text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct X509KeyPair {
    pub id: i32,
    pub created_at: Option<NaiveDateTime>,
    pub updated_at: Option<NaiveDateTime>,
    pub uuid: Option<String>,
    pub certificate: Option<String>,
    pub private_key: Option<String>,
    pub project_id: Option<String>,
    pub user_id: Option<String>,
    pub intermediates: Option<String>,
    pub private_key_passphrase: Option<String>,
}
