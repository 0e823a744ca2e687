//! `[schemas]`: schemas a manifest declares once and tools use by `$ref`. A client gets each
//! tool's schema whole (the entries it uses, and no others), calls are checked against
//! them, `check` names every mistake, and an import of a description whose operations share
//! components writes each component once.

use serde_json::{Value, json};

use crate::harness::{Server, Workspace, run, text};

const SHARED: &str = r##"
[schemas]
Pet = { type = "object", required = ["name"], additionalProperties = false, properties = { name = { type = "string", minLength = 1 }, tag = { "$ref" = "#/$defs/Tag" } } }
Tag = '{"type": "string", "enum": ["cat", "dog"]}'
Unused = { type = "integer" }

[[tools]]
name = "add_pet"
input-schema = '{"type": "object", "properties": {"pet": {"$ref": "#/$defs/Pet"}}, "required": ["pet"]}'
[tools.static]
content = [{ type = "text", text = "added" }]

[[tools]]
name = "get_pet"
arguments.tag = { type = "string" }
output-schema = '{"type": "object", "properties": {"pet": {"$ref": "#/$defs/Pet"}}}'
[tools.command]
argv = ["printf", '{{"pet": {{"name": "Rex", "tag": "%s"}}}}', "{tag}"]
output = "json"
"##;

fn listed<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["result"]["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["name"] == name))
        .unwrap_or_else(|| panic!("{name} is listed: {list}"))
}

#[test]
fn a_client_gets_each_schema_whole_and_calls_are_checked_against_the_shared_entries() {
    let workspace = Workspace::new(&format!("[server]\ninline-refs = false\n{SHARED}"));
    let mut server = Server::start(&workspace.manifest());
    server.handshake("2025-11-25");
    let list = server.request("tools/list", json!({}));
    // As written, with the entries it uses (through others too) and none it does not.
    let input = &listed(&list, "add_pet")["inputSchema"];
    assert_eq!(input["properties"]["pet"], json!({"$ref": "#/$defs/Pet"}));
    let defs: Vec<&String> = input["$defs"].as_object().expect("$defs").keys().collect();
    assert_eq!(defs, ["Pet", "Tag"], "{input}");
    let output = &listed(&list, "get_pet")["outputSchema"];
    assert_eq!(output["$defs"]["Tag"]["enum"], json!(["cat", "dog"]));

    // Arguments are checked through the entries, to the last one.
    let refused = server.call("add_pet", json!({"pet": {"name": "Rex", "tag": "bird"}}));
    assert_eq!(refused["isError"], json!(true), "{refused}");
    assert!(text(&refused).contains("pet.tag"), "{refused}");
    let added = server.call("add_pet", json!({"pet": {"name": "Rex", "tag": "dog"}}));
    assert_eq!(text(&added), "added", "{added}");
    // And so is what a tool returns.
    let fits = server.call("get_pet", json!({"tag": "cat"}));
    assert_eq!(fits["structuredContent"]["pet"]["tag"], "cat", "{fits}");
    let broken = server.call("get_pet", json!({"tag": "bird"}));
    assert_eq!(broken["isError"], json!(true), "{broken}");
}

#[test]
fn inlined_by_default_the_listing_has_no_reference_left() {
    let workspace = Workspace::new(SHARED);
    let mut server = Server::start(&workspace.manifest());
    server.handshake("2025-06-18");
    let list = server.request("tools/list", json!({}));
    let input = &listed(&list, "add_pet")["inputSchema"];
    assert!(!input.to_string().contains("$ref"), "{input}");
    assert_eq!(
        input["properties"]["pet"]["properties"]["tag"]["enum"],
        json!(["cat", "dog"])
    );
    // `list` reads the same.
    let (code, out, err) = run(
        &[
            "list",
            "--config",
            workspace.manifest().to_str().expect("path"),
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("add_pet"), "{out}");
}

#[test]
fn check_names_each_mistake_in_the_shared_schemas_and_their_use() {
    let cases: [(&str, &str); 10] = [
        (
            "[schemas]\nTag = { type = \"string\" }\n[[tools]]\nname = \"t\"\ninput-schema = '{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"type\": \"object\", \"properties\": {\"p\": {\"$ref\": \"#/$defs/Tag\"}}}'\n[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n",
            "which are JSON Schema 2020-12",
        ),
        (
            "[schemas]\nX = { type = \"object\", properties = { child = { \"$ref\" = \"#\" } } }\n[[tools]]\nname = \"t\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n",
            "`$ref: #` is not `#/$defs/NAME`",
        ),
        (
            "[schemas]\nTag = { type = \"string\" }\nPet = { properties = { x = { \"$id\" = \"urn:inner\", \"$ref\" = \"#/$defs/Tag\" } } }\n[[tools]]\nname = \"t\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n",
            "`[schemas] Pet`: it has `$id`",
        ),
        (
            "[schemas]\nTag = { enum = [\"cat\"] }\n[[tools]]\nname = \"t\"\noutput-schema = '{\"type\": \"object\", \"properties\": {\"tag\": {\"$ref\": \"#/$defs/Tag\"}}}'\n[tools.static]\nstructured-content = { tag = \"dog\" }\n",
            "structured-content",
        ),
        (
            "[schemas]\nPet = { type = \"object\" }\n[[tools]]\nname = \"t\"\ninput-schema = '{\"type\": \"object\", \"properties\": {\"p\": {\"$ref\": \"#/$defs/Nope\"}}}'\n[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n",
            "names no `$defs` entry of its own and no `[schemas]` entry",
        ),
        (
            "[schemas]\nPet = { \"$ref\" = \"#/$defs/Gone\" }\n[[tools]]\nname = \"t\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n",
            "`[schemas] Pet`: `$ref: #/$defs/Gone`",
        ),
        (
            "[schemas]\nTag = { type = \"string\" }\nPet = { properties = { t = { \"$ref\" = \"#/$defs/Tag\" } } }\n[[tools]]\nname = \"t\"\ninput-schema = '{\"type\": \"object\", \"$defs\": {\"Tag\": {\"type\": \"integer\"}}, \"properties\": {\"p\": {\"$ref\": \"#/$defs/Pet\"}}}'\n[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n",
            "has the name of a `[schemas]` entry it uses",
        ),
        (
            "[schemas]\n\"a/b\" = { type = \"string\" }\n[[tools]]\nname = \"t\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n",
            "`a/b` cannot name a shared schema",
        ),
        (
            "[schemas]\nPet = { \"$defs\" = { X = {} } }\n[[tools]]\nname = \"t\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n",
            "`[schemas] Pet` has `$defs`",
        ),
        (
            "[schemas]\nPet = { type = \"string\", pattern = \"(\" }\n[[tools]]\nname = \"t\"\n[tools.static]\ncontent = [{ type = \"text\", text = \"x\" }]\n",
            "`[schemas] Pet` is unusable",
        ),
    ];
    for (manifest, expected) in cases {
        let workspace = Workspace::new(manifest);
        let (code, out, err) = run(
            &[
                "check",
                "--config",
                workspace.manifest().to_str().expect("path"),
            ],
            workspace.dir.path(),
        );
        assert_ne!(code, 0, "{manifest}\n{out}");
        assert!(
            err.contains(expected),
            "{manifest}\nwanted {expected}\n{err}"
        );
    }
}

/// A tool's own part that does not compile: `check` compiles every schema and says so;
/// serving compiles one that uses `[schemas]` on its first call, which is refused.
#[test]
fn a_root_that_does_not_compile_is_a_check_error_and_its_calls_are_refused() {
    let manifest = "[schemas]\nTag = { type = \"string\" }\n[[tools]]\nname = \"t\"\ninput-schema = '{\"type\": \"object\", \"properties\": {\"tag\": {\"$ref\": \"#/$defs/Tag\"}, \"q\": {\"type\": \"string\", \"pattern\": \"(\"}}}'\n[tools.static]\ncontent = [{ type = \"text\", text = \"ran\" }]\n";
    let workspace = Workspace::new(manifest);
    let (code, err) = workspace.check();
    assert_ne!(code, 0);
    assert!(err.contains("the input schema of `t` is unusable"), "{err}");
    let mut server = Server::start(&workspace.manifest());
    server.handshake("2025-11-25");
    let result = server.call("t", json!({"tag": "x"}));
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(text(&result).contains("does not compile"), "{result}");
    assert!(!text(&result).contains("ran"), "{result}");
}

/// The same for an output schema: the call is refused before its command runs (whose
/// result could never be checked), where a schema that compiles lets it run: the control.
#[test]
fn an_output_schema_that_does_not_compile_refuses_the_call_before_it_runs() {
    for (pattern, runs) in [("(", false), ("^[a-z]+$", true)] {
        let workspace = Workspace::new("");
        let marker = workspace.path("ran");
        let manifest = format!(
            "[schemas]\nTag = {{ type = \"string\" }}\n[[tools]]\nname = \"t\"\noutput-schema = '{{\"type\": \"object\", \"properties\": {{\"tag\": {{\"$ref\": \"#/$defs/Tag\"}}, \"q\": {{\"type\": \"string\", \"pattern\": \"{pattern}\"}}}}}}'\n[tools.command]\nargv = [\"sh\", \"-c\", \"touch {}; echo '{{{{}}}}'\"]\noutput = \"json\"\n",
            marker.display()
        );
        std::fs::write(workspace.manifest(), manifest).expect("write");
        let mut server = Server::start(&workspace.manifest());
        server.handshake("2025-11-25");
        let result = server.call("t", json!({}));
        assert_eq!(marker.exists(), runs, "{pattern}: {result}");
        assert_eq!(result["isError"], json!(!runs), "{pattern}: {result}");
    }
}

/// 300 operations that each take and return one big component: the component is written
/// once, not 600 times, and the manifest serves every tool whole.
#[test]
fn an_import_writes_each_shared_component_once() {
    let fields: serde_json::Map<String, Value> = (0..200)
        .map(|index| {
            (
                format!("field{index}"),
                json!({"type": "string", "description": format!("The field number {index} of a big record")}),
            )
        })
        .collect();
    let mut paths = serde_json::Map::new();
    for index in 0..300 {
        paths.insert(
            format!("/records/{index}"),
            json!({"post": {
                "operationId": format!("put{index}"),
                "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"record": {"$ref": "#/components/schemas/Record"}}}}}},
                "responses": {"200": {"description": "-", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Record"}}}}}
            }}),
        );
    }
    let description = json!({
        "openapi": "3.1.0",
        "info": {"title": "Records", "version": "1"},
        "servers": [{"url": "https://records.example.com"}],
        "paths": paths,
        "components": {"schemas": {"Record": {"type": "object", "properties": fields}}}
    });
    let component = description["components"].to_string().len();
    let workspace = Workspace::new("");
    std::fs::write(workspace.path("records.json"), description.to_string()).expect("write");
    let (code, out, err) = run(
        &[
            "import",
            "openapi",
            "records.json",
            "--max-output-schema",
            "1MiB",
        ],
        workspace.dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("[[tools]]").count(), 300);
    // Each tool is a few hundred bytes besides the one copy of the component; a copy per
    // tool, as imports made before, would be 300 times the component.
    assert!(
        out.len() < 2 * component + 300 * 1_500,
        "{} bytes for a component of {component}",
        out.len()
    );
    assert_eq!(out.matches("\"field199\"").count(), 1);
    std::fs::write(workspace.manifest(), &out).expect("write");
    let mut server = Server::start(&workspace.manifest());
    server.handshake("2025-11-25");
    let list = server.request("tools/list", json!({}));
    let output = &listed(&list, "put299")["outputSchema"];
    assert_eq!(
        output["properties"].as_object().map(serde_json::Map::len),
        Some(200)
    );
}

/// A server of 1,000 tools or more compiles each tool's schemas on the first call that
/// needs them (a big API's imported manifest would otherwise hold every tool's compiled
/// schema): one that does not compile is still a `check` error, and serving refuses its
/// calls before they run while the other tools work. The control: the same schema in a
/// small manifest is a load error.
#[test]
fn a_big_manifest_compiles_schemas_on_first_use_and_refuses_one_that_does_not_compile() {
    let broken = "[[tools]]\nname = \"broken\"\ninput-schema = '{\"type\": \"object\", \"properties\": {\"q\": {\"type\": \"string\", \"pattern\": \"(\"}}}'\n[tools.static]\ncontent = [{ type = \"text\", text = \"ran\" }]\n";
    let small = Workspace::new(broken);
    let (status, err) = small.check();
    assert_ne!(status, 0);
    assert!(
        err.contains("the input schema of `broken` is unusable"),
        "{err}"
    );
    let gone = Server::start(&small.manifest()).close().0;
    assert!(!gone.success(), "a small manifest with it does not serve");

    let mut manifest = String::from(broken);
    for index in 0..1_000 {
        manifest.push_str(&format!(
            "[[tools]]\nname = \"t{index}\"\ninput-schema = '{{\"type\": \"object\", \"properties\": {{\"n\": {{\"type\": \"integer\"}}}}, \"additionalProperties\": false}}'\n[tools.static]\ncontent = [{{ type = \"text\", text = \"{index}\" }}]\n"
        ));
    }
    let big = Workspace::new(&manifest);
    let (status, err) = big.check();
    assert_ne!(status, 0);
    assert!(
        err.contains("the input schema of `broken` is unusable"),
        "{err}"
    );
    let mut server = Server::start(&big.manifest());
    server.handshake("2025-11-25");
    let result = server.call("broken", json!({"q": "x"}));
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(text(&result).contains("does not compile"), "{result}");
    assert!(!text(&result).contains("ran"), "{result}");
    // The others are compiled when called, and checked.
    let result = server.call("t7", json!({"n": 3}));
    assert_eq!(text(&result), "7", "{result}");
    let result = server.call("t7", json!({"n": "three"}));
    assert_eq!(result["isError"], json!(true), "{result}");
}

/// 50 operations that each declare the same long query parameter inline (as Microsoft Graph
/// declares `$orderby` on every operation of an entity): the import writes its schema once,
/// in `[schemas]`, and each tool uses it by reference; a client is listed the same schema
/// whole, and a call is checked against it. The control: a parameter one operation declares
/// stays where it is.
#[test]
fn an_import_writes_an_argument_many_operations_repeat_once() {
    let order: Vec<String> = (0..40).map(|index| format!("field{index} desc")).collect();
    let mut paths = serde_json::Map::new();
    for index in 0..50 {
        paths.insert(
            format!("/records/{index}"),
            json!({"get": {
                "operationId": format!("list{index}"),
                "parameters": [
                    {"name": "orderby", "in": "query", "description": "Order items by property values",
                     "schema": {"type": "array", "uniqueItems": true, "items": {"type": "string", "enum": order}}},
                    {"name": format!("only{index}"), "in": "query", "description": format!("A parameter of operation {index} alone, long enough to be shared if it were"),
                     "schema": {"type": "string", "enum": order}}
                ],
                "responses": {"200": {"description": "-"}}
            }}),
        );
    }
    let description = json!({
        "openapi": "3.1.0",
        "info": {"title": "Records", "version": "1"},
        "servers": [{"url": "https://records.example.com"}],
        "paths": paths,
    });
    let workspace = Workspace::new("");
    std::fs::write(workspace.path("records.json"), description.to_string()).expect("write");
    let (code, out, err) = run(&["import", "openapi", "records.json"], workspace.dir.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("[[tools]]").count(), 50);
    // The shared one once; each tool's own (50 of them) where it is.
    assert_eq!(out.matches("\"field39 desc\"").count(), 1 + 50, "{out}");
    assert_eq!(
        out.matches("\"$ref\": \"#/$defs/list0.orderby\"").count(),
        50
    );
    std::fs::write(workspace.manifest(), &out).expect("write");
    let mut server = Server::start(&workspace.manifest());
    server.handshake("2025-11-25");
    let list = server.request("tools/list", json!({}));
    let tool = listed(&list, "list49");
    assert_eq!(
        tool["inputSchema"]["properties"]["orderby"]["items"]["enum"],
        json!(order),
        "{tool}"
    );
    assert!(!tool.to_string().contains("$ref"), "{tool}");
    let refused = server.call("list49", json!({"orderby": ["nonsense"]}));
    assert_eq!(refused["isError"], json!(true), "{refused}");
}
