//! The operations of a description, in the document's order.

use serde_json::Value;

use super::document::{Document, ImportError};

/// The methods OpenAPI 3 names, in the order a path item lists them when it has several.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// One operation: a method on a path.
#[derive(Debug)]
pub struct Operation<'a> {
    /// Upper case, e.g. `GET`.
    pub method: String,
    pub path: &'a str,
    pub id: Option<&'a str>,
    pub tags: Vec<&'a str>,
    /// The path item (its `parameters` and `servers` apply to every operation in it).
    pub item: &'a Value,
    pub operation: &'a Value,
}

impl Operation<'_> {
    /// `operationId (METHOD /path)`, or `METHOD /path`, for messages.
    pub fn label(&self) -> String {
        match self.id {
            Some(id) => format!("{id} ({} {})", self.method, self.path),
            None => format!("{} {}", self.method, self.path),
        }
    }

    /// What `--include`/`--exclude` match: the `operationId`, else `method_path` as the tool
    /// would be named.
    pub fn key(&self) -> String {
        self.id.map_or_else(
            || super::naming::from_method_and_path(&self.method, self.path),
            ToOwned::to_owned,
        )
    }

    pub fn text(&self, key: &str) -> Option<&str> {
        self.operation.get(key).and_then(Value::as_str)
    }
}

/// Every operation under `paths`, in the document's order (paths as written, methods as each
/// path item writes them). A path item given as a `$ref` is followed.
pub fn list(document: &Document) -> Result<Vec<Operation<'_>>, ImportError> {
    let Some(paths) = document.root.get("paths").and_then(Value::as_object) else {
        return Err(ImportError::NoOperations);
    };
    let mut operations = Vec::new();
    for (path, item) in paths {
        let Ok(item) = document.resolve(item) else {
            continue;
        };
        let Some(fields) = item.as_object() else {
            continue;
        };
        for (method, operation) in fields {
            if !METHODS.contains(&method.as_str()) || !operation.is_object() {
                continue;
            }
            operations.push(Operation {
                method: method.to_ascii_uppercase(),
                path,
                id: operation.get("operationId").and_then(Value::as_str),
                tags: operation
                    .get("tags")
                    .and_then(Value::as_array)
                    .map(|tags| tags.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default(),
                item,
                operation,
            });
        }
    }
    if operations.is_empty() {
        return Err(ImportError::NoOperations);
    }
    Ok(operations)
}
