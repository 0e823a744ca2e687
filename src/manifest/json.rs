//! TOML values to JSON values, for schemas, defaults and `_meta` written in TOML.

use serde_json::{Map, Number, Value};

/// Converts a TOML value; datetimes become their RFC 3339 text. Returns `None` for a float
/// JSON cannot represent (NaN or infinity).
pub(super) fn toml_to_json(value: &toml::Value) -> Option<Value> {
    Some(match value {
        toml::Value::String(text) => Value::String(text.clone()),
        toml::Value::Integer(number) => Value::Number((*number).into()),
        toml::Value::Float(number) => Value::Number(Number::from_f64(*number)?),
        toml::Value::Boolean(flag) => Value::Bool(*flag),
        toml::Value::Datetime(datetime) => Value::String(datetime.to_string()),
        toml::Value::Array(items) => {
            Value::Array(items.iter().map(toml_to_json).collect::<Option<_>>()?)
        }
        toml::Value::Table(table) => Value::Object(table_to_json(table)?),
    })
}

pub(super) fn table_to_json(table: &toml::Table) -> Option<Map<String, Value>> {
    table
        .iter()
        .map(|(key, value)| Some((key.clone(), toml_to_json(value)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::toml_to_json;

    #[test]
    fn converts_nested_values_in_order() {
        let value: toml::Value =
            toml::from_str("z = 1\na = [1.5, true, 'x']\n[t]\nk = 1979-05-27").expect("valid toml");
        assert_eq!(
            toml_to_json(&value).map(|v| v.to_string()),
            Some(json!({"z": 1, "a": [1.5, true, "x"], "t": {"k": "1979-05-27"}}).to_string())
        );
    }

    #[test]
    fn rejects_non_finite_floats() {
        assert_eq!(toml_to_json(&toml::Value::Float(f64::NAN)), None);
    }
}
