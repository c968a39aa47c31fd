//! Mapping between the domain structs of `openkeel_core::objects` and table rows, plus the
//! SQL building blocks every table module uses (select lists, filters, Magnum's pagination,
//! inserts and column-wise updates).

use crate::backend::{At, ColIdx, Conn, Row, Val};
use crate::DbError;

/// A domain struct stored as one row of `TABLE`.
pub(crate) trait Record: Sized + Clone {
    const TABLE: &'static str;
    /// Every column, in MariaDB column order.
    const COLUMNS: &'static [Column];
    /// Decode a row, reading the `k`th column of [`Record::COLUMNS`] at the position
    /// `at(k)` gives; a column it gives no position for (not selected) is left at its type's
    /// default.
    fn from_row_some_with(
        row: &Row,
        at: impl FnMut(usize) -> Option<usize>,
    ) -> Result<Self, DbError>;
    /// Decode a row of [`select_all`] (its columns are [`Record::COLUMNS`] in order: read by
    /// position; [`rows_of`] checks the names at a statement's first row).
    fn from_row(row: &Row) -> Result<Self, DbError> {
        Self::from_row_some_with(row, Some)
    }
    /// The value of `column` as it is bound in SQL (JSON columns as their JSON text; `NULL`
    /// for `None`); `None` for an unknown column.
    fn get(&self, column: &str) -> Option<Val>;
}

/// A column and, for JSON columns, the text Magnum writes for `None` (`{}` / `[]`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Column {
    pub name: &'static str,
    pub json_empty: Option<&'static str>,
}

pub(crate) fn column<T: Record>(name: &str) -> Option<&'static Column> {
    T::COLUMNS.iter().find(|c| c.name == name)
}

/// The value written for `column`: `None` in a JSON column becomes its empty value, as
/// `JsonEncodedType.process_bind_param` does.
pub(crate) fn write_value<T: Record>(record: &T, col: &Column) -> Val {
    match record.get(col.name) {
        Some(Val::Null) | None => col.json_empty.map_or(Val::Null, |e| Val::Text(e.into())),
        Some(v) => v,
    }
}

fn decode_err(
    table: &'static str,
    column: impl std::fmt::Display,
    reason: impl ToString,
) -> DbError {
    DbError::Decode {
        table,
        column: column.to_string(),
        reason: reason.to_string(),
    }
}

/// Per-kind decoding and encoding of a column (used by the `record!` macro).
pub(crate) mod kind {
    use super::*;
    use chrono::NaiveDateTime;
    use openkeel_core::objects::{StringMap, Taint};
    use std::str::FromStr;

    pub(crate) mod int {
        use super::*;
        pub(crate) const JSON_EMPTY: Option<&str> = None;
        pub(crate) fn decode(t: &'static str, row: &Row, col: impl ColIdx) -> Result<i32, DbError> {
            row.opt_i32(col)?
                .ok_or_else(|| decode_err(t, col, "NULL in a NOT NULL column"))
        }
        pub(crate) fn encode(v: &i32) -> Val {
            Val::Int(i64::from(*v))
        }
    }

    pub(crate) mod opt_int {
        use super::*;
        pub(crate) const JSON_EMPTY: Option<&str> = None;
        pub(crate) fn decode(
            _: &'static str,
            row: &Row,
            col: impl ColIdx,
        ) -> Result<Option<i32>, DbError> {
            Ok(row.opt_i32(col)?)
        }
        pub(crate) fn encode(v: &Option<i32>) -> Val {
            (*v).into()
        }
    }

    pub(crate) mod string {
        use super::*;
        pub(crate) const JSON_EMPTY: Option<&str> = None;
        pub(crate) fn decode(
            t: &'static str,
            row: &Row,
            col: impl ColIdx,
        ) -> Result<String, DbError> {
            row.opt_string(col)?
                .ok_or_else(|| decode_err(t, col, "NULL in a NOT NULL column"))
        }
        pub(crate) fn encode(v: &str) -> Val {
            Val::Text(v.to_string())
        }
    }

    pub(crate) mod opt_string {
        use super::*;
        pub(crate) const JSON_EMPTY: Option<&str> = None;
        pub(crate) fn decode(
            _: &'static str,
            row: &Row,
            col: impl ColIdx,
        ) -> Result<Option<String>, DbError> {
            Ok(row.opt_string(col)?)
        }
        pub(crate) fn encode(v: &Option<String>) -> Val {
            v.clone().into()
        }
    }

    pub(crate) mod opt_bool {
        use super::*;
        pub(crate) const JSON_EMPTY: Option<&str> = None;
        pub(crate) fn decode(
            _: &'static str,
            row: &Row,
            col: impl ColIdx,
        ) -> Result<Option<bool>, DbError> {
            Ok(row.opt_bool(col)?)
        }
        pub(crate) fn encode(v: &Option<bool>) -> Val {
            (*v).into()
        }
    }

    pub(crate) mod opt_datetime {
        use super::*;
        pub(crate) const JSON_EMPTY: Option<&str> = None;
        pub(crate) fn decode(
            _: &'static str,
            row: &Row,
            col: impl ColIdx,
        ) -> Result<Option<NaiveDateTime>, DbError> {
            Ok(row.opt_datetime(col)?)
        }
        pub(crate) fn encode(v: &Option<NaiveDateTime>) -> Val {
            v.map_or(Val::Null, Val::DateTime)
        }
    }

    /// A status enumeration stored as its string.
    pub(crate) mod opt_enum {
        use super::*;
        pub(crate) const JSON_EMPTY: Option<&str> = None;
        pub(crate) fn decode<E: FromStr>(
            t: &'static str,
            row: &Row,
            col: impl ColIdx,
        ) -> Result<Option<E>, DbError>
        where
            E::Err: std::fmt::Display,
        {
            match row.opt_string(col)? {
                None => Ok(None),
                Some(s) => E::from_str(&s).map(Some).map_err(|e| decode_err(t, col, e)),
            }
        }
        pub(crate) fn encode<E: AsRef<str>>(v: &Option<E>) -> Val {
            v.as_ref()
                .map_or(Val::Null, |e| Val::Text(e.as_ref().to_string()))
        }
    }

    /// `JSONEncodedDict` of strings.
    pub(crate) mod opt_dict {
        use super::*;
        pub(crate) const JSON_EMPTY: Option<&str> = Some("{}");
        pub(crate) fn decode(
            t: &'static str,
            row: &Row,
            col: impl ColIdx,
        ) -> Result<Option<StringMap>, DbError> {
            match row.opt_string(col)? {
                None => Ok(None),
                Some(s) => crate::json::parse_string_map(&s)
                    .map(Some)
                    .map_err(|e| decode_err(t, col, e)),
            }
        }
        pub(crate) fn encode(v: &Option<StringMap>) -> Val {
            v.as_ref()
                .map_or(Val::Null, |m| Val::Text(crate::json::dumps_string_map(m)))
        }
    }

    /// `JSONEncodedList` of strings.
    pub(crate) mod opt_list {
        use super::*;
        pub(crate) const JSON_EMPTY: Option<&str> = Some("[]");
        pub(crate) fn decode(
            t: &'static str,
            row: &Row,
            col: impl ColIdx,
        ) -> Result<Option<Vec<String>>, DbError> {
            match row.opt_string(col)? {
                None => Ok(None),
                Some(s) => crate::json::parse_string_list(&s)
                    .map(Some)
                    .map_err(|e| decode_err(t, col, e)),
            }
        }
        pub(crate) fn encode(v: &Option<Vec<String>>) -> Val {
            v.as_ref()
                .map_or(Val::Null, |l| Val::Text(crate::json::dumps_string_list(l)))
        }
    }

    /// `JSONEncodedList` of dicts (`node_taints`).
    pub(crate) mod opt_dict_list {
        use super::*;
        pub(crate) const JSON_EMPTY: Option<&str> = Some("[]");
        pub(crate) fn decode(
            t: &'static str,
            row: &Row,
            col: impl ColIdx,
        ) -> Result<Option<Vec<Taint>>, DbError> {
            match row.opt_string(col)? {
                None => Ok(None),
                Some(s) => crate::json::parse_dict_list(&s)
                    .map(Some)
                    .map_err(|e| decode_err(t, col, e)),
            }
        }
        pub(crate) fn encode(v: &Option<Vec<Taint>>) -> Val {
            v.as_ref()
                .map_or(Val::Null, |l| Val::Text(crate::json::dumps_dict_list(l)))
        }
    }
}

/// Implement [`Record`] for a domain struct: `record!(Type, "table", [col: kind, ...])`, the
/// columns in MariaDB order, every struct field listed (the struct literal enforces it).
macro_rules! record {
    ($ty:ty, $table:literal, [ $( $col:ident : $kind:ident ),* $(,)? ]) => {
        impl $crate::record::Record for $ty {
            const TABLE: &'static str = $table;
            const COLUMNS: &'static [$crate::record::Column] = &[
                $( $crate::record::Column {
                    name: stringify!($col),
                    json_empty: $crate::record::kind::$kind::JSON_EMPTY,
                } ),*
            ];
            // the last column's `k += 1` is not read
            #[allow(unused_assignments)]
            fn from_row_some_with(
                row: &$crate::backend::Row,
                mut at: impl FnMut(usize) -> Option<usize>,
            ) -> Result<Self, $crate::DbError> {
                let mut k = 0usize;
                Ok(Self {
                    $( $col: {
                        let this = k;
                        k += 1;
                        match at(this) {
                            Some(index) => $crate::record::kind::$kind::decode(
                                $table,
                                row,
                                $crate::backend::At { index, name: stringify!($col) },
                            )?,
                            None => Default::default(),
                        }
                    }, )*
                })
            }
            fn get(&self, column: &str) -> Option<$crate::backend::Val> {
                match column {
                    $( stringify!($col) => Some($crate::record::kind::$kind::encode(&self.$col)), )*
                    _ => None,
                }
            }
        }
    };
}
pub(crate) use record;

/// `` `col` `` — identifiers are quoted with backticks, which both MySQL and SQLite accept
/// (`binary` is a reserved word in MySQL).
pub(crate) fn q(ident: &str) -> String {
    ["`", ident, "`"].concat()
}

/// `` `col` ``, or `` alias.`col` `` for a column of the table aliased `alias` in a join.
pub(crate) fn qualified(alias: &str, col: &str) -> String {
    if alias.is_empty() {
        q(col)
    } else {
        [alias, ".`", col, "`"].concat()
    }
}

/// `SELECT <all columns> FROM <table>`, built once per table (every read starts with it:
/// building it each time was an eighth of a cluster show's instructions).
pub(crate) fn select_all<T: Record>() -> &'static str {
    static BUILT: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<&'static str, &'static str>>,
    > = std::sync::OnceLock::new();
    let mut built = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    built.entry(T::TABLE).or_insert_with(|| {
        let cols: Vec<String> = T::COLUMNS.iter().map(|c| q(c.name)).collect();
        let sql = format!("SELECT {} FROM {}", cols.join(", "), q(T::TABLE));
        Box::leak(sql.into_boxed_str())
    })
}

/// `T`'s columns in a join: selected as `` alias.`col` AS `alias.col` `` so that the
/// tables' columns keep distinct names in the result (`id`, `uuid`, `name`, `project_id`
/// ... are in several tables), and read by position: a join's select list is its tables'
/// lists one after the other, `T`'s from the position [`Joined::after`] gives ([`Joined::check`]
/// compares the names once per statement). Build it once (the names and positions are not
/// worked out again for each row or query).
pub(crate) struct Joined<T> {
    /// The select list.
    pub select: String,
    /// The result name of each selected column, in select order.
    names: Vec<String>,
    /// For each column of `T::COLUMNS`, in that order, its place among the selected ones
    /// (`None`: not selected).
    ranks: Vec<Option<usize>>,
    /// The position of the first selected column in the result.
    offset: usize,
    /// The place of `id` among the selected columns.
    id_rank: usize,
    _record: std::marker::PhantomData<fn() -> T>,
}

/// The name a column of the table aliased `alias` has in a join's result (`alias.col`).
pub(crate) fn joined_name(alias: &str, col: &str) -> String {
    format!("{alias}.{col}")
}

impl<T: Record> Joined<T> {
    /// Every column of `T`, first in the select list.
    pub(crate) fn new(alias: &str) -> Self {
        Self::with(alias, |_| true)
    }

    /// Only `id` and `columns` of `T` (`T::COLUMNS` names), first in the select list; a
    /// decoded `T` has its other fields at their defaults. On MariaDB each column of a result
    /// costs its definition on the wire and in both processes at every execution of a
    /// statement.
    pub(crate) fn only(alias: &str, columns: &[&str]) -> Self {
        debug_assert!(columns.iter().all(|c| column::<T>(c).is_some()));
        Self::with(alias, |c| c == "id" || columns.contains(&c))
    }

    /// The same columns placed right after `prev`'s in the select list.
    pub(crate) fn after<U>(mut self, prev: &Joined<U>) -> Self {
        self.offset = prev.offset + prev.names.len();
        self
    }

    fn with(alias: &str, selected: impl Fn(&str) -> bool) -> Self {
        let mut names = Vec::new();
        let mut select = Vec::new();
        let ranks = T::COLUMNS
            .iter()
            .map(|c| {
                selected(c.name).then(|| {
                    let name = joined_name(alias, c.name);
                    select.push(format!("{} AS {}", qualified(alias, c.name), q(&name)));
                    names.push(name);
                    names.len() - 1
                })
            })
            .collect::<Vec<_>>();
        let id_rank =
            T::COLUMNS
                .iter()
                .zip(&ranks)
                .find_map(|(c, r)| if c.name == "id" { *r } else { None });
        debug_assert!(id_rank.is_some(), "{} has an id column", T::TABLE);
        Joined {
            select: select.join(", "),
            names,
            ranks,
            offset: 0,
            id_rank: id_rank.unwrap_or_default(),
            _record: std::marker::PhantomData,
        }
    }

    /// Whether the result's columns at `T`'s positions have `T`'s names (once per
    /// statement: the rows are read by position).
    pub(crate) fn check(&self, row: &Row) -> Result<(), DbError> {
        check_names(
            row,
            T::TABLE,
            self.offset,
            self.names.iter().map(String::as_str),
        )
    }

    /// The row's `id` of `T` (`None`: an outer join found no row of `T`).
    pub(crate) fn id(&self, row: &Row) -> Result<Option<i32>, DbError> {
        Ok(row.opt_i32(At {
            index: self.offset + self.id_rank,
            name: &self.names[self.id_rank],
        })?)
    }

    /// The row's `T`, `None` when an outer join found none (its `id` is NULL).
    pub(crate) fn decode(&self, row: &Row) -> Result<Option<T>, DbError> {
        if self.id(row)?.is_none() {
            return Ok(None);
        }
        T::from_row_some_with(row, |k| {
            self.ranks
                .get(k)
                .copied()
                .flatten()
                .map(|r| self.offset + r)
        })
        .map(Some)
    }
}

/// Whether the result's columns from position `offset` on are named `names`; a
/// `Decode` error naming the first that is not.
pub(crate) fn check_names<'a>(
    row: &Row,
    table: &'static str,
    offset: usize,
    names: impl IntoIterator<Item = &'a str>,
) -> Result<(), DbError> {
    for (i, name) in names.into_iter().enumerate() {
        if row.column_name(offset + i) != Some(name) {
            return Err(decode_err(
                table,
                name,
                format!("not at position {} of the result", offset + i),
            ));
        }
    }
    Ok(())
}

/// The decoder of the rows of a statement starting with [`select_all`]: by position, the
/// columns' names checked at the first row.
pub(crate) fn rows_of<T: Record>() -> impl FnMut(&Row) -> Result<T, DbError> {
    let mut checked = false;
    move |row| {
        if !checked {
            check_names(row, T::TABLE, 0, T::COLUMNS.iter().map(|c| c.name))?;
            checked = true;
        }
        T::from_row(row)
    }
}

/// A conjunction of conditions with their bound values, on the columns of one table (of the
/// table aliased [`Where::on`]'s alias, in a join).
#[derive(Debug, Default, Clone)]
pub(crate) struct Where {
    alias: &'static str,
    clauses: Vec<String>,
    args: Vec<Val>,
}

impl Where {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Conditions on the columns of the table aliased `alias` (each column is rendered
    /// `` alias.`col` ``), for a join.
    pub(crate) fn on(alias: &'static str) -> Self {
        Where {
            alias,
            ..Self::default()
        }
    }

    /// An empty conjunction on the same table as `self`.
    pub(crate) fn same_table(&self) -> Self {
        Self::on(self.alias)
    }

    /// The column `col` as the conditions name it (qualified in a join).
    pub(crate) fn col(&self, col: &str) -> String {
        qualified(self.alias, col)
    }

    /// `col = ?`, or `col IS NULL` for `NULL` (SQLAlchemy's `filter_by(col=None)`).
    pub(crate) fn eq(&mut self, col: &str, v: impl Into<Val>) -> &mut Self {
        let v = v.into();
        let col = self.col(col);
        if v.is_null() {
            self.clauses.push([col.as_str(), " IS NULL"].concat());
        } else {
            self.clauses.push([col.as_str(), " = ?"].concat());
            self.args.push(v);
        }
        self
    }

    /// `col IN (?, ...)`; an empty list matches nothing, as SQLAlchemy's empty `in_()`.
    pub(crate) fn in_list(&mut self, col: &str, vals: Vec<Val>) -> &mut Self {
        if vals.is_empty() {
            self.clauses.push("1 != 1".into());
        } else {
            let marks = vec!["?"; vals.len()].join(", ");
            self.clauses.push(format!("{} IN ({marks})", self.col(col)));
            self.args.extend(vals);
        }
        self
    }

    /// A raw condition with its values.
    pub(crate) fn raw(&mut self, clause: impl Into<String>, args: Vec<Val>) -> &mut Self {
        self.clauses.push(clause.into());
        self.args.extend(args);
        self
    }

    /// The conjunction as one parenthesised expression (`1 = 1` when empty), with its values.
    pub(crate) fn into_expr(self) -> (String, Vec<Val>) {
        if self.clauses.is_empty() {
            ("1 = 1".into(), self.args)
        } else {
            (["(", &self.clauses.join(" AND "), ")"].concat(), self.args)
        }
    }

    /// ` WHERE a AND b` (or nothing) and the values.
    pub(crate) fn sql(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            [" WHERE ", &self.clauses.join(" AND ")].concat()
        }
    }

    pub(crate) fn args(&self) -> &[Val] {
        &self.args
    }
}

/// Magnum's list parameters: `limit`, `marker` (the row after which the page starts),
/// `sort_key` and `sort_dir` (`asc` by default; oslo.db also accepts `-nullsfirst` /
/// `-nullslast` suffixes).
#[derive(Debug, Clone)]
pub struct Page<'a, T> {
    pub limit: Option<u64>,
    pub marker: Option<&'a T>,
    pub sort_key: Option<&'a str>,
    pub sort_dir: Option<&'a str>,
}

impl<T> Default for Page<'_, T> {
    fn default() -> Self {
        Page {
            limit: None,
            marker: None,
            sort_key: None,
            sort_dir: None,
        }
    }
}

impl<'a, T> Page<'a, T> {
    /// No limit, no marker, sorted by `id` ascending.
    pub fn all() -> Self {
        Self::default()
    }

    pub fn limit(mut self, limit: u64) -> Self {
        self.limit = Some(limit);
        self
    }

    pub fn marker(mut self, marker: &'a T) -> Self {
        self.marker = Some(marker);
        self
    }

    pub fn sort(mut self, key: &'a str, dir: &'a str) -> Self {
        self.sort_key = Some(key);
        self.sort_dir = Some(dir);
        self
    }
}

/// `ORDER BY`, marker condition and `LIMIT` of Magnum's `_paginate_query` (oslo.db
/// `paginate_query` with sort keys `[sort_key, 'id']`).
pub(crate) struct Pagination {
    /// Condition to AND into the query (marker), possibly empty.
    pub marker: Option<(String, Vec<Val>)>,
    /// ` ORDER BY ... [LIMIT n]`.
    pub tail: String,
}

pub(crate) fn paginate<T: Record>(page: &Page<'_, T>, alias: &str) -> Result<Pagination, DbError> {
    let mut sort_keys: Vec<&str> = vec!["id"];
    if let Some(k) = page.sort_key.filter(|k| !k.is_empty()) {
        if k != "id" {
            sort_keys.insert(0, k);
        }
    }
    let sort_dir = page.sort_dir.unwrap_or("asc");
    let col = |k: &str| qualified(alias, k);

    let mut order = Vec::new();
    let (main_dir, null_dir) = match sort_dir.split_once('-') {
        Some((m, n)) => (m, n),
        None => (sort_dir, ""),
    };
    for key in &sort_keys {
        if column::<T>(key).is_none() {
            return Err(DbError::InvalidParameterValue(format!(
                "The sort_key value \"{}\" is an invalid field for sorting",
                page.sort_key.unwrap_or(key)
            )));
        }
        let dir = match main_dir {
            "asc" => "ASC",
            "desc" => "DESC",
            _ => return Err(DbError::InvalidSortDir(sort_dir.to_string())),
        };
        match null_dir {
            "" => {}
            "nullsfirst" => order.push(format!("({} IS NULL) DESC", col(key))),
            "nullslast" => order.push(format!("({} IS NOT NULL) DESC", col(key))),
            _ => return Err(DbError::InvalidSortDir(sort_dir.to_string())),
        }
        order.push(format!("{} {dir}", col(key)));
    }

    let marker = match page.marker {
        None => None,
        Some(m) => {
            let values: Vec<Val> = sort_keys
                .iter()
                .map(|k| match m.get(k) {
                    Some(Val::Bool(b)) => Val::Int(i64::from(b)),
                    Some(v) => v,
                    None => Val::Null,
                })
                .collect();
            let mut criteria = Vec::new();
            let mut args = Vec::new();
            for i in 0..sort_keys.len() {
                if values[i].is_null() {
                    continue;
                }
                let mut crit = Vec::new();
                for j in 0..i {
                    if !values[j].is_null() {
                        crit.push(format!("{} = ?", col(sort_keys[j])));
                        args.push(values[j].clone());
                    }
                }
                let c = col(sort_keys[i]);
                let cmp = if sort_dir.starts_with("desc") {
                    if sort_dir.ends_with("nullsfirst") {
                        format!("({c} < ? OR {c} IS NULL)")
                    } else {
                        format!("{c} < ?")
                    }
                } else if sort_dir.ends_with("nullslast") {
                    format!("({c} > ? OR {c} IS NULL)")
                } else {
                    format!("{c} > ?")
                };
                crit.push(cmp);
                args.push(values[i].clone());
                criteria.push(format!("({})", crit.join(" AND ")));
            }
            if criteria.is_empty() {
                None
            } else {
                Some((format!("({})", criteria.join(" OR ")), args))
            }
        }
    };

    let mut tail = format!(" ORDER BY {}", order.join(", "));
    if let Some(limit) = page.limit {
        tail.push_str(&format!(" LIMIT {limit}"));
    }
    Ok(Pagination { marker, tail })
}

/// `SELECT * FROM table WHERE <where> [AND <marker>] ORDER BY ... LIMIT ...`.
pub(crate) async fn select_page<T: Record>(
    conn: &mut Conn<'_>,
    mut filter: Where,
    page: &Page<'_, T>,
) -> Result<Vec<T>, DbError> {
    let p = paginate(page, "")?;
    if let Some((cond, args)) = p.marker {
        filter.raw(cond, args);
    }
    let sql = format!("{}{}{}", select_all::<T>(), filter.sql(), p.tail);
    conn.fetch_map(&sql, filter.args(), rows_of::<T>()).await
}

/// Rows matching `filter`, in id order.
pub(crate) async fn select_where<T: Record>(
    conn: &mut Conn<'_>,
    filter: &Where,
    for_update: bool,
) -> Result<Vec<T>, DbError> {
    let mut sql = format!("{}{} ORDER BY {}", select_all::<T>(), filter.sql(), q("id"));
    if for_update && conn.backend() == crate::Backend::MySql {
        sql.push_str(" FOR UPDATE");
    }
    conn.fetch_map(&sql, filter.args(), rows_of::<T>()).await
}

/// [`select_where`] with each row mapped by `f` as it is decoded (e.g. to keep only a few
/// fields of each row of a large result).
pub(crate) async fn select_where_map<T: Record, U>(
    conn: &mut Conn<'_>,
    filter: &Where,
    mut f: impl FnMut(T) -> U,
) -> Result<Vec<U>, DbError> {
    let sql = format!("{}{} ORDER BY {}", select_all::<T>(), filter.sql(), q("id"));
    let mut decode = rows_of::<T>();
    conn.fetch_map(&sql, filter.args(), |r| decode(r).map(&mut f))
        .await
}

/// `SELECT COUNT(*) FROM table WHERE ...`.
pub(crate) async fn count_where<T: Record>(
    conn: &mut Conn<'_>,
    filter: &Where,
) -> Result<i64, DbError> {
    let sql = format!("SELECT COUNT(*) FROM {}{}", q(T::TABLE), filter.sql());
    let rows = conn.fetch_all(&sql, filter.args()).await?;
    Ok(rows
        .first()
        .map(|r| r.opt_i64(0))
        .transpose()?
        .flatten()
        .unwrap_or(0))
}

/// `DELETE FROM table WHERE ...`; returns the number of rows deleted.
pub(crate) async fn delete_where<T: Record>(
    conn: &mut Conn<'_>,
    filter: &Where,
) -> Result<u64, DbError> {
    let sql = format!("DELETE FROM {}{}", q(T::TABLE), filter.sql());
    Ok(conn.execute(&sql, filter.args()).await?.0)
}

/// Insert every column of `record` (except `id` when it is 0, which lets the database assign
/// it); returns the row id.
pub(crate) async fn insert<T: Record>(conn: &mut Conn<'_>, record: &T) -> Result<i64, DbError> {
    let mut cols = Vec::new();
    let mut args = Vec::new();
    for c in T::COLUMNS {
        let v = write_value(record, c);
        if c.name == "id" && matches!(v, Val::Int(0) | Val::Null) {
            continue;
        }
        cols.push(q(c.name));
        args.push(v);
    }
    let sql = format!(
        "INSERT INTO {} ({}) VALUES ({})",
        q(T::TABLE),
        cols.join(", "),
        vec!["?"; cols.len()].join(", ")
    );
    Ok(conn.execute(&sql, &args).await?.1)
}

/// The distinct column names of `fields`, validated against the table.
pub(crate) fn check_fields<T: Record>(fields: &[&str]) -> Result<Vec<&'static str>, DbError> {
    let mut out: Vec<&'static str> = Vec::new();
    for f in fields {
        match column::<T>(f) {
            Some(c) => {
                if !out.contains(&c.name) {
                    out.push(c.name);
                }
            }
            None => {
                return Err(DbError::InvalidParameterValue(format!(
                    "{f} is not a field of {}",
                    T::TABLE
                )))
            }
        }
    }
    Ok(out)
}

/// The names of the columns whose values differ between `old` and `new`.
pub(crate) fn changed_columns<T: Record>(old: &T, new: &T) -> Vec<&'static str> {
    T::COLUMNS
        .iter()
        .filter(|c| write_value(old, c) != write_value(new, c))
        .map(|c| c.name)
        .collect()
}

/// Write `fields` of `values` into the row `current` (selected `FOR UPDATE`), as SQLAlchemy's
/// `ref.update(values)` + flush: only columns whose value changes are written, and
/// `updated_at` is set to now when anything changes (unless the caller sets it).
/// Returns whether an UPDATE was issued.
pub(crate) async fn update_row<T: Record>(
    conn: &mut Conn<'_>,
    current: &T,
    values: &T,
    fields: &[&'static str],
) -> Result<bool, DbError> {
    let mut sets = Vec::new();
    let mut args = Vec::new();
    let mut updated_at_set = false;
    for name in fields {
        let Some(c) = column::<T>(name) else { continue };
        let new = write_value(values, c);
        if new != write_value(current, c) {
            if c.name == "updated_at" {
                updated_at_set = true;
            }
            sets.push(format!("{} = ?", q(c.name)));
            args.push(new);
        }
    }
    if sets.is_empty() {
        return Ok(false);
    }
    if !updated_at_set && column::<T>("updated_at").is_some() {
        sets.push(format!("{} = ?", q("updated_at")));
        args.push(Val::DateTime(crate::backend::utcnow()));
    }
    let id = current.get("id").unwrap_or(Val::Null);
    args.push(id);
    let sql = format!(
        "UPDATE {} SET {} WHERE {} = ?",
        q(T::TABLE),
        sets.join(", "),
        q("id")
    );
    conn.execute(&sql, &args).await?;
    Ok(true)
}

/// Exactly one row or the given errors (`query.one()`).
pub(crate) fn one<T>(
    mut rows: Vec<T>,
    not_found: impl FnOnce() -> DbError,
    multiple: impl FnOnce() -> DbError,
) -> Result<T, DbError> {
    match rows.len() {
        0 => Err(not_found()),
        1 => Ok(rows.remove(0)),
        _ => Err(multiple()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::Database;
    use openkeel_core::objects::ClusterTemplate;

    /// The decoded templates of `sql`'s rows through `t`, after checking `x` and `t`.
    async fn decoded(
        sql: &str,
        x: &Joined<ClusterTemplate>,
        t: &Joined<ClusterTemplate>,
    ) -> Result<Vec<ClusterTemplate>, DbError> {
        let db = Database::connect("sqlite::memory:").await.unwrap();
        let mut c = db.acquire_read().await.unwrap();
        let mut out = Vec::new();
        c.conn()
            .fetch_each(sql, &[], |row| {
                x.check(row)?;
                t.check(row)?;
                out.extend(t.decode(row)?);
                Ok(())
            })
            .await?;
        Ok(out)
    }

    #[tokio::test]
    async fn joined_columns_are_read_at_their_place_once_their_names_are_checked() {
        let x = Joined::<ClusterTemplate>::only("x", &[]);
        let t = Joined::<ClusterTemplate>::only("t", &["uuid", "labels"]).after(&x);
        assert_eq!(x.select, "x.`id` AS `x.id`");
        assert_eq!(
            t.select,
            "t.`id` AS `t.id`, t.`uuid` AS `t.uuid`, t.`labels` AS `t.labels`"
        );
        let got = decoded(
            r#"SELECT 7 AS `x.id`, 5 AS `t.id`, 'u-1' AS `t.uuid`, '{"a": "b"}' AS `t.labels`
               UNION ALL SELECT 8, NULL, NULL, NULL"#,
            &x,
            &t,
        )
        .await
        .unwrap();
        assert_eq!(got.len(), 1, "the outer join's missing row is none");
        assert_eq!(got[0].id, 5);
        assert_eq!(got[0].uuid.as_deref(), Some("u-1"));
        assert_eq!(
            got[0]
                .labels
                .as_ref()
                .and_then(|l| l.get("a"))
                .map(String::as_str),
            Some("b")
        );
        assert_eq!(got[0].name, None, "not selected");

        // the same columns in another order are refused, not read at the wrong places
        let err = decoded(
            r#"SELECT 7 AS `x.id`, 5 AS `t.id`, '{"a": "b"}' AS `t.labels`, 'u-1' AS `t.uuid`"#,
            &x,
            &t,
        )
        .await
        .unwrap_err();
        assert!(
            matches!(&err, DbError::Decode { table: "cluster_template", column, reason }
                if column == "t.uuid" && reason.contains("position 2")),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn rows_of_a_select_all_are_checked_at_the_first_row() {
        let db = Database::connect("sqlite::memory:").await.unwrap();
        let mut c = db.acquire_read().await.unwrap();
        let mut decode = rows_of::<ClusterTemplate>();
        let err = c
            .conn()
            .fetch_map("SELECT 1 AS `id`", &[], |r| decode(r))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, DbError::Decode { column, .. } if column == ClusterTemplate::COLUMNS[0].name),
            "{err:?}"
        );
    }
}
