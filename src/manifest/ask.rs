//! `confirm` and `[tools.ask]`: the question's placeholders name arguments; the fields are
//! an object of primitives that rmcp's elicitation model accepts, none named like an
//! argument (answers join the arguments).

use serde_json::{Value, json};

use super::Checker;
use super::arguments::object_schema;
use super::facts::{ArgumentFacts, template_at};
use super::json::toml_to_json;
use super::wire::ToolWire;
use crate::ask::{Ask, Sample};
use crate::schema::CompiledSchema;

pub(super) fn build_ask(
    wire: &ToolWire,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<Ask> {
    match (&wire.confirm, &wire.ask) {
        (None, None) => None,
        (Some(_), Some(ask)) => {
            checker
                .error(
                    "a tool has `confirm` or `[tools.ask]`, not both",
                    ask.span(),
                )
                .hint("`[tools.ask]` with no fields is a confirmation");
            None
        }
        (Some(question), None) => {
            let message = template_at(question.get_ref(), question.span(), facts, checker)?;
            let schema = json!({"type": "object", "properties": {}});
            Some(Ask {
                message,
                compiled: compiled(&schema, question.span(), checker)?,
                schema,
            })
        }
        (None, Some(ask)) => {
            let span = ask.span();
            let ask = ask.get_ref();
            let message = template_at(ask.message.get_ref(), ask.message.span(), facts, checker);
            let schema = match (&ask.fields, &ask.schema) {
                (Some(fields), None) => {
                    Value::Object(object_schema(fields.get_ref(), false, checker))
                }
                (None, Some(schema)) => toml_to_json(schema.get_ref()).unwrap_or(Value::Null),
                (None, None) => json!({"type": "object", "properties": {}}),
                (Some(_), Some(schema)) => {
                    checker.error(
                        "`[tools.ask]` has `fields` or `schema`, not both",
                        schema.span(),
                    );
                    return None;
                }
            };
            let probe = json!({"message": "", "requestedSchema": schema});
            if serde_json::from_value::<rmcp::model::ElicitRequestParams>(probe).is_err() {
                checker
                    .error("an elicitation cannot ask for these fields", span.clone())
                    .hint("MCP elicitation asks for an object of strings, numbers, integers, booleans and enums (single or multiple choice), nothing nested");
                return None;
            }
            for name in schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|fields| fields.keys())
            {
                if facts.names.contains(name) {
                    checker.error(
                        format!("the field `{name}` has an argument's name; answers join the arguments, so they must differ"),
                        span.clone(),
                    );
                }
            }
            Some(Ask {
                message: message?,
                compiled: compiled(&schema, span, checker)?,
                schema,
            })
        }
    }
}

fn compiled(
    schema: &Value,
    span: std::ops::Range<usize>,
    checker: &mut Checker,
) -> Option<std::sync::Arc<CompiledSchema>> {
    CompiledSchema::compile(schema)
        .map(std::sync::Arc::new)
        .map_err(|error| checker.error(format!("the fields' schema is unusable: {error}"), span))
        .ok()
}

/// `[tools.sample]`: its prompt names arguments (and answers); its placeholder is new.
pub(super) fn build_sample(
    wire: &ToolWire,
    facts: &ArgumentFacts,
    checker: &mut Checker,
) -> Option<Sample> {
    let sample = wire.sample.as_ref()?;
    let span = sample.span();
    let sample = sample.get_ref();
    let name = sample.name.clone().unwrap_or_else(|| "sample".to_owned());
    if facts.names.contains(&name) {
        checker
            .error(
                format!("the model's answer fills `{{{name}}}`, which an argument or field already names"),
                span,
            )
            .hint("set `name` in `[tools.sample]` to another placeholder");
        return None;
    }
    Some(Sample {
        prompt: template_at(
            sample.prompt.get_ref(),
            sample.prompt.span(),
            facts,
            checker,
        )?,
        system: sample.system.clone(),
        max_tokens: sample.max_tokens.unwrap_or(500).max(1),
        name,
    })
}
