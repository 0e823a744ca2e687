//! `confirm`, `[tools.ask]`, `[tools.sample]` and `roots`: each question's placeholders name
//! arguments and earlier answers; the fields are an object of primitives that rmcp's
//! elicitation model accepts, none named like an argument or an earlier answer (answers join
//! the arguments); every input has its own key.

use serde_json::{Value, json};

use super::Checker;
use super::arguments::object_schema;
use super::facts::{ArgumentFacts, template_at};
use super::json::toml_to_json;
use super::wire::{AskWire, OneOrMany, ToolWire};
use crate::ask::{Ask, Sample};
use crate::inputs::{Input, Inputs, ROOTS};
use crate::schema::CompiledSchema;
use toml::Spanned;

/// Everything a tool gathers before it runs, in order: the confirmation or questions, the
/// model's answer, the roots. Each one's text may name arguments and what came before it,
/// and its answers join `facts` for what comes after (and for the backend).
pub(super) fn build_inputs(
    wire: &ToolWire,
    facts: &mut ArgumentFacts,
    checker: &mut Checker,
) -> Inputs {
    let mut inputs = Inputs::default();
    match (&wire.confirm, &wire.ask) {
        (Some(_), Some(ask)) => {
            checker
                .error(
                    "a tool has `confirm` or `[tools.ask]`, not both",
                    ask.span(),
                )
                .hint("`[tools.ask]` with no fields is a confirmation");
        }
        (Some(question), None) => {
            let message = template_at(question.get_ref(), question.span(), facts, checker);
            let schema = json!({"type": "object", "properties": {}});
            if let (Some(message), Some(compiled)) =
                (message, compiled(&schema, question.span(), checker))
            {
                inputs.items.push(Input::Ask(Ask {
                    key: "confirm".into(),
                    optional: false,
                    message,
                    compiled,
                    schema,
                }));
            }
        }
        (None, Some(asks)) => inputs.items.extend(build_asks(asks, facts, checker).items),
        (None, None) => {}
    }
    if let Some(sample) = build_sample(wire, facts, checker) {
        facts.add_answers(
            &json!({"properties": {sample.name.clone(): {"type": "string"}}, "required": [sample.name.clone()]}),
            true,
        );
        inputs.items.push(Input::Sample(sample));
    }
    if wire.roots == Some(true) {
        if facts.names.iter().any(|name| name == ROOTS) {
            checker.error(
                "`roots = true` fills `{roots}`, which an argument or field already names",
                wire.name.span(),
            );
        }
        facts.add_answers(
            &json!({"properties": {ROOTS: {"type": "string"}}, "required": [ROOTS]}),
            true,
        );
        inputs.items.push(Input::Roots);
    }
    unique_keys(&inputs, wire.name.span(), checker);
    inputs
}

/// `[tools.ask]`/`[prompts.ask]`, one question or several (`[[…ask]]`).
pub(super) fn build_asks(
    asks: &Spanned<OneOrMany<AskWire>>,
    facts: &mut ArgumentFacts,
    checker: &mut Checker,
) -> Inputs {
    let several = asks.get_ref().0.len() > 1;
    let mut inputs = Inputs::default();
    for ask in &asks.get_ref().0 {
        if several && ask.name.is_none() {
            checker
                .error(
                    "with several questions, each needs a `name`",
                    ask.message.span(),
                )
                .hint("the name is the question's key in `inputRequests`");
        }
        if let Some(built) = build_ask(ask, facts, checker) {
            facts.add_answers(&built.schema, !built.optional);
            inputs.items.push(Input::Ask(built));
        }
    }
    inputs
}

pub(super) fn unique_keys(inputs: &Inputs, span: std::ops::Range<usize>, checker: &mut Checker) {
    let mut seen = std::collections::HashSet::new();
    for key in inputs.keys() {
        if !seen.insert(key) {
            checker.error(
                format!("two inputs are named `{key}`; each question, `[tools.sample]` and the roots need their own name"),
                span.clone(),
            );
        }
    }
}

fn build_ask(ask: &AskWire, facts: &ArgumentFacts, checker: &mut Checker) -> Option<Ask> {
    let span = ask.message.span();
    let message = template_at(ask.message.get_ref(), ask.message.span(), facts, checker);
    let schema = match (&ask.fields, &ask.schema) {
        (Some(fields), None) => Value::Object(object_schema(fields.get_ref(), false, checker)),
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
    if schema.to_string().contains("\"x-mcp-header\"") {
        checker.error(
            "a question's fields do not travel in headers (`header`)",
            span.clone(),
        );
        return None;
    }
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
                format!("the field `{name}` has the name of an argument or an earlier answer; answers join the arguments, so they must differ"),
                span.clone(),
            );
        }
    }
    Some(Ask {
        key: ask.name.clone().unwrap_or_else(|| "ask".to_owned()),
        optional: ask.optional.unwrap_or(false),
        message: message?,
        compiled: compiled(&schema, span, checker)?,
        schema,
    })
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
fn build_sample(wire: &ToolWire, facts: &ArgumentFacts, checker: &mut Checker) -> Option<Sample> {
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
