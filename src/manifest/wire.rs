//! The manifest as written: serde shapes with spans, before any checking. Every struct
//! denies unknown keys so a misspelt key is an error, never silently ignored.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

/// `[server]`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct ServerWire {
    pub(super) name: Option<String>,
    pub(super) version: Option<String>,
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    pub(super) instructions: Option<String>,
    #[schemars(with = "Option<String>")]
    pub(super) website_url: Option<Spanned<String>>,
    pub(super) icons: Option<Vec<IconWire>>,
    /// The sandbox every command tool gets; a tool's own `[tools.sandbox]` may only narrow it.
    #[schemars(with = "Option<SandboxWire>")]
    pub(super) sandbox: Option<Spanned<SandboxWire>>,
    /// Whether tools' calls may run as tasks unless a tool says otherwise: `"never"`
    /// (default), `"optional"` or `"required"`.
    #[schemars(with = "Option<TaskWire>")]
    pub(super) task: Option<Spanned<String>>,
    /// How long a task's result is kept after it ends, e.g. `"1h"` (the default).
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) task_ttl: Option<Spanned<toml::Value>>,
    /// How often clients are asked to poll a task, e.g. `"1s"` (the default).
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) task_poll_interval: Option<Spanned<toml::Value>>,
    /// The rate limit of tools that set none, per tool and caller, e.g. `"10/s"`.
    #[schemars(with = "Option<String>")]
    pub(super) rate: Option<Spanned<String>>,
    /// With `rate`: how many calls may come at once (default: the rate's count).
    #[schemars(with = "Option<u32>")]
    pub(super) burst: Option<Spanned<u32>>,
    /// Over HTTP, accept OAuth access tokens (JWTs) from this issuer, for this server.
    #[schemars(with = "Option<AuthWire>")]
    pub(super) auth: Option<Spanned<AuthWire>>,
    /// Advertise schemas with their local `$ref`s inlined, recursive ones aside (default
    /// `true`); `false` advertises them as written.
    pub(super) inline_refs: Option<bool>,
    /// List tools that find, call and add the others (`find_tools`, `call_tool`,
    /// `add_tools`) instead of every tool: for manifests too big for a model to read whole.
    pub(super) discovery: Option<bool>,
    /// The toolsets served when `--toolsets` chooses none (default: every tool).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) toolsets: Option<Vec<Spanned<String>>>,
}

/// `[server.auth]`: this server as an OAuth 2.1 resource server.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct AuthWire {
    /// The authorization server that issues the tokens, e.g. `"https://id.example.com"`.
    #[schemars(with = "String")]
    pub(super) issuer: Spanned<String>,
    /// This server's URL as clients reach it (the MCP endpoint), the `aud` of its tokens.
    #[schemars(with = "String")]
    pub(super) audience: Spanned<String>,
    /// The issuer's key set; default: the `jwks_uri` of the issuer's metadata.
    #[schemars(with = "Option<String>")]
    pub(super) jwks_url: Option<Spanned<String>>,
    /// Accepted signature algorithms (default `RS256`, `PS256`, `ES256`, `EdDSA`).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) algorithms: Option<Spanned<Vec<String>>>,
    /// A shared secret (`${env:…}` or `${file:…}`) that enables HS256, HS384 and HS512.
    #[schemars(with = "Option<String>")]
    pub(super) hmac_secret: Option<Spanned<String>>,
    /// Clock skew allowed on `exp` and `nbf`, e.g. `"30s"` (the default).
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) leeway: Option<Spanned<toml::Value>>,
    /// Scopes every request needs.
    pub(super) scopes: Option<Vec<String>>,
    /// Check opaque (non-JWT) tokens at the issuer's RFC 7662 introspection endpoint.
    #[schemars(with = "Option<String>")]
    pub(super) introspection_url: Option<Spanned<String>>,
    /// This server's client id at the issuer, for introspection.
    #[schemars(with = "Option<String>")]
    pub(super) client_id: Option<Spanned<String>>,
    /// Its client secret (`${env:…}` or `${file:…}`).
    #[schemars(with = "Option<String>")]
    pub(super) client_secret: Option<Spanned<String>>,
}

/// Whether a tool's calls may run as tasks.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[expect(
    dead_code,
    reason = "only its JSON Schema is used; the value is read as text"
)]
pub(super) enum TaskWire {
    /// Always answered in the request.
    Never,
    /// A task when the client declares the tasks extension.
    Optional,
    /// Only as a task; a client without the extension is refused.
    Required,
}

/// `[server.sandbox]`, `[tools.sandbox]`: what a command may reach and use.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct SandboxWire {
    /// Paths (relative to the manifest) whose files the command may read.
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) read: Option<Spanned<Vec<Spanned<String>>>>,
    /// Paths the command may read and change; `{temp-dir}` is a private one per call.
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) write: Option<Spanned<Vec<Spanned<String>>>>,
    /// Paths whose programs the command may run.
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) execute: Option<Spanned<Vec<Spanned<String>>>>,
    /// Also read and run the system's programs and libraries (default true).
    #[schemars(with = "Option<bool>")]
    pub(super) system: Option<Spanned<bool>>,
    /// Also read and run what the program starts through: its `#!` interpreters and the
    /// version managers' shims (default true).
    #[schemars(with = "Option<bool>")]
    pub(super) shims: Option<Spanned<bool>>,
    /// `false`, `true`, or a list of `"host:port"` the command may connect to.
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) network: Option<Spanned<toml::Value>>,
    /// Private writable memory, e.g. `"512MiB"`.
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) memory: Option<Spanned<toml::Value>>,
    /// CPU time, e.g. `"30s"`.
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) cpu: Option<Spanned<toml::Value>>,
    /// Processes of one call at once.
    #[schemars(with = "Option<i64>")]
    pub(super) processes: Option<Spanned<i64>>,
    /// The largest file the command may write, e.g. `"100MiB"`.
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) file_size: Option<Spanned<toml::Value>>,
    /// Open file descriptors.
    #[schemars(with = "Option<i64>")]
    pub(super) open_files: Option<Spanned<i64>>,
    /// Deny system calls no tool needs (default true).
    #[schemars(with = "Option<bool>")]
    pub(super) seccomp: Option<Spanned<bool>>,
    /// Refuse to serve the tool unless this kernel enforces all of it.
    #[schemars(with = "Option<bool>")]
    pub(super) required: Option<Spanned<bool>>,
}

/// An icon of the server or of a tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct IconWire {
    #[schemars(with = "String")]
    pub(super) src: Spanned<String>,
    pub(super) mime_type: Option<String>,
    pub(super) sizes: Option<Vec<String>>,
    pub(super) theme: Option<ThemeWire>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum ThemeWire {
    Light,
    Dark,
}

/// One `[[tools]]` entry.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct ToolWire {
    #[schemars(with = "String")]
    pub(super) name: Spanned<String>,
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    /// The toolsets this tool belongs to (`--toolsets` chooses which a server serves).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) toolsets: Option<Vec<Spanned<String>>>,
    pub(super) annotations: Option<AnnotationsWire>,
    pub(super) icons: Option<Vec<IconWire>>,
    #[serde(rename = "_meta")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub(super) meta: Option<Spanned<toml::Table>>,
    /// The concise form of the input schema: one table per argument.
    #[schemars(with = "Option<IndexMap<String, ArgumentWire>>")]
    pub(super) arguments: Option<Spanned<IndexMap<Spanned<String>, ArgumentWire>>>,
    /// A full JSON Schema, as a TOML table or a JSON string.
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) input_schema: Option<Spanned<toml::Value>>,
    /// A full JSON Schema in a JSON file, relative to the manifest.
    #[schemars(with = "Option<String>")]
    pub(super) input_schema_file: Option<Spanned<String>>,
    /// The concise form of an object output schema: one table per field.
    #[schemars(with = "Option<IndexMap<String, ArgumentWire>>")]
    pub(super) output: Option<Spanned<IndexMap<Spanned<String>, ArgumentWire>>>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) output_schema: Option<Spanned<toml::Value>>,
    #[schemars(with = "Option<String>")]
    pub(super) output_schema_file: Option<Spanned<String>>,
    /// A jq program that narrows the tool's JSON output (a command's `output = "json"`, an
    /// HTTP tool's JSON response) before its output schema is checked.
    #[schemars(with = "Option<String>")]
    pub(super) project: Option<Spanned<String>>,
    /// The most items each array of the JSON output keeps (the output's own array, or each
    /// array field of its object); the result says how many were left out.
    #[schemars(with = "Option<i64>", range(min = 1, max = 100_000))]
    pub(super) max_items: Option<Spanned<i64>>,
    /// Examples that `mcp-serve test` runs.
    #[serde(default)]
    #[schemars(with = "Vec<ExampleWire>")]
    pub(super) examples: Vec<Spanned<ExampleWire>>,
    /// Calls of this tool running at once.
    #[schemars(with = "Option<i64>")]
    pub(super) max_concurrent: Option<Spanned<i64>>,
    /// Calls of this tool that may wait for a slot; beyond, calls fail fast.
    #[schemars(with = "Option<i64>")]
    pub(super) queue: Option<Spanned<i64>>,
    #[schemars(with = "Option<CommandWire>")]
    pub(super) command: Option<Spanned<CommandWire>>,
    #[serde(rename = "static")]
    #[schemars(with = "Option<StaticWire>")]
    pub(super) static_result: Option<Spanned<StaticWire>>,
    #[schemars(with = "Option<HttpWire>")]
    pub(super) http: Option<Spanned<HttpWire>>,
    /// Confines the command (`[tools.sandbox]`).
    #[schemars(with = "Option<SandboxWire>")]
    pub(super) sandbox: Option<Spanned<SandboxWire>>,
    /// Ask the user to confirm before the tool runs: the question, with `{argument}`s.
    #[schemars(with = "Option<String>")]
    pub(super) confirm: Option<Spanned<String>>,
    /// Ask the user for values before the tool runs (`[tools.ask]`, or `[[tools.ask]]` for
    /// several questions).
    #[schemars(with = "Option<AsksSchema>")]
    pub(super) ask: Option<Spanned<OneOrMany<AskWire>>>,
    /// Ask the client's model before the tool runs (`[tools.sample]`).
    #[schemars(with = "Option<SampleWire>")]
    pub(super) sample: Option<Spanned<SampleWire>>,
    /// Ask the client for its roots before the tool runs; their paths fill `{roots}`, one
    /// per line.
    pub(super) roots: Option<bool>,
    /// Whether calls may run as tasks: `"never"`, `"optional"` or `"required"` (default:
    /// `[server] task`, else `"never"`).
    #[schemars(with = "Option<TaskWire>")]
    pub(super) task: Option<Spanned<String>>,
    /// When a call runs as a task, ask its questions inside the task (the client answers
    /// with `tasks/update`) instead of before the task is created (default false).
    #[schemars(with = "Option<bool>")]
    pub(super) ask_in_task: Option<Spanned<bool>>,
    /// At most this many calls per caller, e.g. `"10/s"`, `"100/m"`, `"1000/h"`.
    #[schemars(with = "Option<String>")]
    pub(super) rate: Option<Spanned<String>>,
    /// With `rate`: how many calls may come at once (default: the rate's count).
    #[schemars(with = "Option<u32>")]
    pub(super) burst: Option<Spanned<u32>>,
    /// OAuth scopes a caller needs to see and call this tool (with `[server.auth]`).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) scopes: Option<Spanned<Vec<String>>>,
    /// An MCP App (`io.modelcontextprotocol/ui`): the page a host renders for this tool's
    /// results, and who may call the tool.
    #[schemars(with = "Option<AppWire>")]
    pub(super) app: Option<Spanned<AppWire>>,
}

/// A tool's `[tools.app]`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct AppWire {
    /// An HTML file relative to the manifest, read at each `resources/read` (no symbolic
    /// link followed, at most 16 MiB, secrets redacted); or a folder, whose `entry` page is
    /// served with the scripts, stylesheets and images of the folder it names inline.
    #[schemars(with = "Option<String>")]
    pub(super) page: Option<Spanned<String>>,
    /// With a folder as `page`: its entry page (default `index.html`).
    #[schemars(with = "Option<String>")]
    pub(super) entry: Option<Spanned<String>>,
    /// The page's URI (`ui://…`; default `ui://` and the tool's name).
    #[schemars(with = "Option<String>")]
    pub(super) uri: Option<Spanned<String>>,
    /// Who may call the tool: `"model"`, `"app"` (its page), or both (the default).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) visibility: Option<Spanned<Vec<Spanned<String>>>>,
    /// The page asks the host for a border and background (`true`) or none (`false`).
    pub(super) prefers_border: Option<bool>,
    /// What the page asks the host to allow: `camera`, `microphone`, `geolocation`,
    /// `clipboard-write`.
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) permissions: Option<Vec<Spanned<String>>>,
    /// The origins the host's Content-Security-Policy lets the page reach.
    pub(super) csp: Option<CspWire>,
}

/// `[tools.app.csp]`: origins such as `https://api.example.com` or `https://*.example.com`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
#[expect(
    clippy::struct_field_names,
    reason = "the extension's own names (`connectDomains`, …), kebab-cased"
)]
pub(super) struct CspWire {
    /// `fetch`, XHR and WebSocket (`connect-src`).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) connect_domains: Option<Vec<Spanned<String>>>,
    /// Scripts, styles, images, fonts and media.
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) resource_domains: Option<Vec<Spanned<String>>>,
    /// Nested frames (`frame-src`).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) frame_domains: Option<Vec<Spanned<String>>>,
    /// `<base href>` (`base-uri`).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) base_uri_domains: Option<Vec<Spanned<String>>>,
}

/// A table, or an array of such tables (`[x]` or `[[x]]`). Deserialized straight from the
/// TOML deserializer, so the spans inside survive.
#[derive(Debug)]
pub(super) struct OneOrMany<T>(pub(super) Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Tables<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Tables<T> {
            type Value = OneOrMany<T>;
            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a table or an array of tables")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(|one| OneOrMany(vec![one]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<Self::Value, A::Error> {
                Vec::<T>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(OneOrMany)
            }
        }
        deserializer.deserialize_any(Tables(std::marker::PhantomData))
    }
}

/// The schema of `ask`: one question or several.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "only describes the manifest's JSON Schema")]
pub(super) enum AsksSchema {
    One(Box<AskWire>),
    Many(Vec<AskWire>),
}

/// `[tools.sample]`: a `sampling/createMessage` before the backend runs.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct SampleWire {
    /// The user message; `{argument}` placeholders are filled in.
    #[schemars(with = "String")]
    pub(super) prompt: Spanned<String>,
    pub(super) system: Option<String>,
    /// At most this many tokens (default 500).
    pub(super) max_tokens: Option<u32>,
    /// The placeholder the model's text fills (default `sample`).
    pub(super) name: Option<String>,
}

/// `[tools.ask]`: an elicitation before the backend runs; its answers become placeholders.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct AskWire {
    /// Its key in `inputRequests` (default `ask`); several questions need distinct names.
    pub(super) name: Option<String>,
    /// Go on without the answers when the client cannot ask the user (default false).
    pub(super) optional: Option<bool>,
    /// Shown to the user; `{argument}` placeholders are filled in.
    #[schemars(with = "String")]
    pub(super) message: Spanned<String>,
    /// The fields, in the concise form of `arguments`.
    #[schemars(with = "Option<IndexMap<String, ArgumentWire>>")]
    pub(super) fields: Option<Spanned<IndexMap<Spanned<String>, ArgumentWire>>>,
    /// The fields as a full `requestedSchema` (for titled enums and the like).
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) schema: Option<Spanned<toml::Value>>,
}

/// `[tools.http]`: a request to make.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct HttpWire {
    #[schemars(with = "Option<String>")]
    pub(super) method: Option<Spanned<String>>,
    #[schemars(with = "String")]
    pub(super) url: Spanned<String>,
    #[schemars(with = "Option<IndexMap<String, serde_json::Value>>")]
    pub(super) query: Option<IndexMap<Spanned<String>, Spanned<toml::Value>>>,
    #[schemars(with = "Option<IndexMap<String, String>>")]
    pub(super) headers: Option<IndexMap<Spanned<String>, Spanned<String>>>,
    /// `"arguments"`: all arguments as a JSON object.
    #[schemars(with = "Option<String>")]
    pub(super) body: Option<Spanned<String>>,
    /// A JSON body template.
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) json: Option<Spanned<toml::Value>>,
    /// Form fields.
    #[schemars(with = "Option<IndexMap<String, String>>")]
    pub(super) form: Option<IndexMap<Spanned<String>, Spanned<String>>>,
    /// `multipart/form-data` parts: a text template, or `{ file = "folder/{path}" }`,
    /// `{ base64 = "{content}" }`, with `filename` and `content-type`.
    #[schemars(with = "Option<IndexMap<String, serde_json::Value>>")]
    pub(super) multipart: Option<IndexMap<Spanned<String>, Spanned<toml::Value>>>,
    /// The most the file and base64 parts of one request may add up to (default 16 MiB).
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) max_upload: Option<Spanned<toml::Value>>,
    /// Arguments whose value keeps `/` and other reserved characters where it fills a
    /// whole path segment or query value (OpenAPI's `allowReserved`).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) allow_reserved: Option<Spanned<Vec<String>>>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) timeout: Option<Spanned<toml::Value>>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) max_response: Option<Spanned<toml::Value>>,
    #[schemars(with = "Option<Vec<i64>>")]
    pub(super) success_statuses: Option<Spanned<Vec<i64>>>,
    #[schemars(with = "Option<String>")]
    pub(super) response_pointer: Option<Spanned<String>>,
    pub(super) max_redirects: Option<u8>,
    pub(super) allow_other_hosts: Option<bool>,
    /// Let arguments fill `Authorization`, `Proxy-Authorization` and `Cookie` headers
    /// (default false: those carry the manifest's own credentials only).
    pub(super) argument_credentials: Option<bool>,
}

/// Behaviour hints shown to hosts.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct AnnotationsWire {
    pub(super) title: Option<String>,
    pub(super) read_only: Option<bool>,
    pub(super) destructive: Option<bool>,
    pub(super) idempotent: Option<bool>,
    pub(super) open_world: Option<bool>,
}

/// One argument (or output field) in the concise form.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct ArgumentWire {
    #[serde(rename = "type")]
    #[schemars(with = "Option<String>")]
    pub(super) kind: Option<Spanned<String>>,
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) default: Option<Spanned<toml::Value>>,
    #[serde(rename = "enum")]
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub(super) choices: Option<Spanned<Vec<toml::Value>>>,
    pub(super) optional: Option<bool>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) minimum: Option<Spanned<toml::Value>>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) maximum: Option<Spanned<toml::Value>>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) exclusive_minimum: Option<Spanned<toml::Value>>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) exclusive_maximum: Option<Spanned<toml::Value>>,
    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
    #[schemars(with = "Option<String>")]
    pub(super) pattern: Option<Spanned<String>>,
    pub(super) format: Option<String>,
    pub(super) items: Option<Box<ArgumentWire>>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) unique_items: Option<bool>,
    #[schemars(with = "Option<IndexMap<String, ArgumentWire>>")]
    pub(super) properties: Option<IndexMap<Spanned<String>, ArgumentWire>>,
    pub(super) additional_properties: Option<bool>,
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub(super) examples: Option<Vec<toml::Value>>,
    /// Over 2026 HTTP the value also travels in the `Mcp-Param-{header}` header
    /// (`x-mcp-header`, SEP-2243), which the server checks against the body.
    #[schemars(with = "Option<String>")]
    pub(super) header: Option<Spanned<String>>,
}

/// `[tools.command]`: how to run the tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct CommandWire {
    /// The command line; elements are strings, groups (arrays) or flags (tables).
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub(super) argv: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    /// A shell script, the explicit opt-in to a shell; arguments reach it only as `$1`….
    #[schemars(with = "Option<String>")]
    pub(super) script: Option<Spanned<String>>,
    /// The script's positional parameters, with the same element forms as `argv`.
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub(super) args: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    /// The shell that runs `script` (default `sh`).
    #[schemars(with = "Option<String>")]
    pub(super) shell: Option<Spanned<String>>,
    #[schemars(with = "Option<String>")]
    pub(super) cwd: Option<Spanned<String>>,
    #[schemars(with = "Option<IndexMap<String, String>>")]
    pub(super) env: Option<IndexMap<Spanned<String>, Spanned<String>>>,
    /// `true` (default), `false`, or a list of variable names to keep.
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) inherit_env: Option<Spanned<toml::Value>>,
    #[schemars(with = "Option<String>")]
    pub(super) stdin: Option<Spanned<String>>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) timeout: Option<Spanned<toml::Value>>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) max_output: Option<Spanned<toml::Value>>,
    #[schemars(with = "Option<Vec<i64>>")]
    pub(super) success_codes: Option<Spanned<Vec<i64>>>,
    /// `text`, `json`, `content`, `image`, `audio` or `resource`.
    #[schemars(with = "Option<String>")]
    pub(super) output: Option<Spanned<String>>,
    /// The MIME type of binary output (`image`, `audio`, `resource`); sniffed when absent.
    #[schemars(with = "Option<String>")]
    pub(super) mime_type: Option<Spanned<String>>,
    /// `embed` or `link`: files the command writes into `$MCP_SERVE_OUTPUT_DIR` become blocks.
    #[schemars(with = "Option<String>")]
    pub(super) files: Option<Spanned<String>>,
    /// With `files`: the most files taken (default 100); the result says when more were left.
    #[schemars(with = "Option<i64>", range(min = 1, max = 10_000))]
    pub(super) max_files: Option<Spanned<i64>>,
    /// Keep the whole stdout as a resource when it is cut short.
    pub(super) keep_output: Option<bool>,
    /// The command may write progress and log lines to `$MCP_SERVE_EVENTS`.
    pub(super) events: Option<bool>,
    /// Forward stderr lines as log messages at this level.
    #[schemars(with = "Option<String>")]
    pub(super) stderr_log: Option<Spanned<String>>,
}

/// `[tools.static]`: a result declared in the manifest.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct StaticWire {
    #[serde(default)]
    #[schemars(with = "Vec<BlockWire>")]
    pub(super) content: Vec<Spanned<BlockWire>>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) structured_content: Option<Spanned<toml::Value>>,
    #[serde(default)]
    pub(super) is_error: bool,
}

/// One declared content block.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct BlockWire {
    #[serde(rename = "type")]
    #[schemars(with = "String")]
    pub(super) kind: Spanned<String>,
    pub(super) text: Option<String>,
    /// Base64 data (image, audio) or blob (resource).
    pub(super) data: Option<String>,
    /// A file, relative to the manifest, read at load.
    #[schemars(with = "Option<String>")]
    pub(super) file: Option<Spanned<String>>,
    pub(super) mime_type: Option<String>,
    pub(super) uri: Option<String>,
    pub(super) name: Option<String>,
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    pub(super) size: Option<u64>,
    pub(super) annotations: Option<ContentAnnotationsWire>,
}

/// Annotations on a content block.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct ContentAnnotationsWire {
    pub(super) audience: Option<Vec<String>>,
    pub(super) priority: Option<f64>,
    pub(super) last_modified: Option<String>,
}

/// `[[tools.examples]]`: a call and what it must return.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct ExampleWire {
    pub(super) name: Option<String>,
    #[serde(default)]
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub(super) arguments: toml::Table,
    pub(super) is_error: Option<bool>,
    /// The text blocks, joined by newlines, equal this.
    pub(super) text: Option<String>,
    pub(super) text_contains: Option<String>,
    /// These fields (recursively) are in the structured content.
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) structured: Option<toml::Value>,
    /// The structured content satisfies this JSON Schema.
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) schema: Option<Spanned<toml::Value>>,
    /// For an HTTP tool: what its upstream answers when `mcp-serve test` runs this example (a
    /// stand-in on 127.0.0.1 takes the upstream's place), and the request it expects.
    #[schemars(with = "Option<UpstreamWire>")]
    pub(super) upstream: Option<Spanned<UpstreamWire>>,
}

/// `[tools.examples.upstream]`: the stand-in's answer, and what the request must be.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct UpstreamWire {
    /// The status (default 200).
    pub(super) status: Option<u16>,
    /// Response headers; `content-type` defaults to `application/json` for a table or array
    /// body and `text/plain` for a string.
    #[serde(default)]
    pub(super) headers: IndexMap<String, String>,
    /// A table or an array is sent as JSON; a string as it is.
    #[schemars(with = "Option<serde_json::Value>")]
    pub(super) body: Option<toml::Value>,
    /// The request must use this method.
    pub(super) method: Option<String>,
    /// The request's path must be this (with its query, when this has a `?`).
    pub(super) path: Option<String>,
}

/// One `[[prompts]]` entry: messages a host offers its user, with arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct PromptWire {
    #[schemars(with = "String")]
    pub(super) name: Spanned<String>,
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    pub(super) icons: Option<Vec<IconWire>>,
    /// One table per argument; prompt arguments are strings.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, PromptArgumentWire>")]
    pub(super) arguments: IndexMap<Spanned<String>, PromptArgumentWire>,
    /// The messages, in order.
    #[serde(default)]
    #[schemars(with = "Vec<MessageWire>")]
    pub(super) messages: Vec<Spanned<MessageWire>>,
    /// Ask the user for values before the messages are made; the answers are placeholders.
    #[schemars(with = "Option<AsksSchema>")]
    pub(super) ask: Option<Spanned<OneOrMany<AskWire>>>,
    /// OAuth scopes a caller needs to see, get and complete this prompt (with `[server.auth]`).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) scopes: Option<Spanned<Vec<String>>>,
}

/// One argument of a prompt.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct PromptArgumentWire {
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    /// Arguments are required unless `optional = true`.
    pub(super) optional: Option<bool>,
    /// Values `completion/complete` offers (any value is still accepted).
    pub(super) complete: Option<Vec<String>>,
    /// The only values accepted (and offered).
    #[serde(rename = "enum")]
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) choices: Option<Spanned<Vec<String>>>,
}

/// One message of a prompt: `text`, or a `content` block like `[tools.static]`'s.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct MessageWire {
    /// `user` or `assistant`.
    #[schemars(with = "String")]
    pub(super) role: Spanned<String>,
    /// A text block; `{argument}` placeholders are filled in.
    pub(super) text: Option<String>,
    #[schemars(with = "Option<BlockWire>")]
    pub(super) content: Option<Spanned<BlockWire>>,
}

/// One `[[resources]]` entry: a fixed URI and its contents.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct ResourceWire {
    #[schemars(with = "String")]
    pub(super) uri: Spanned<String>,
    pub(super) name: String,
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    /// Guessed from `file` when absent; `text/plain` for `text`.
    pub(super) mime_type: Option<String>,
    pub(super) text: Option<String>,
    /// Base64 bytes.
    pub(super) blob: Option<String>,
    /// A file relative to the manifest, read at each `resources/read`.
    #[schemars(with = "Option<String>")]
    pub(super) file: Option<Spanned<String>>,
    pub(super) icons: Option<Vec<IconWire>>,
    pub(super) annotations: Option<ContentAnnotationsWire>,
    /// OAuth scopes a caller needs to see, read and subscribe to it (with `[server.auth]`).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) scopes: Option<Spanned<Vec<String>>>,
}

/// One `[[resource-templates]]` entry: an RFC 6570 URI template (simple `{variables}`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct ResourceTemplateWire {
    #[schemars(with = "String")]
    pub(super) uri_template: Spanned<String>,
    pub(super) name: String,
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    pub(super) mime_type: Option<String>,
    /// Text with `{variable}` placeholders.
    #[schemars(with = "Option<String>")]
    pub(super) text: Option<Spanned<String>>,
    /// A file relative to the manifest whose name uses `{variable}`s; a value can never
    /// leave the folder before the first placeholder.
    #[schemars(with = "Option<String>")]
    pub(super) file: Option<Spanned<String>>,
    /// Completion values (`complete`) or the only values accepted (`enum`) per variable.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, PromptArgumentWire>")]
    pub(super) variables: IndexMap<Spanned<String>, PromptArgumentWire>,
    pub(super) icons: Option<Vec<IconWire>>,
    /// OAuth scopes a caller needs to see the template and read what it serves (with
    /// `[server.auth]`).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) scopes: Option<Spanned<Vec<String>>>,
}

/// The whole manifest, for its JSON Schema (`mcp-serve schema`); loading walks the document
/// table by table instead, to report every problem at once.
#[derive(Debug, Deserialize, JsonSchema)]
#[expect(dead_code, reason = "only its JSON Schema is used")]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
#[schemars(
    title = "mcp-serve manifest",
    description = "Tools served by mcp-serve as a Model Context Protocol server"
)]
pub(super) struct ManifestWire {
    pub(super) server: Option<ServerWire>,
    pub(super) tools: Option<Vec<ToolWire>>,
    pub(super) prompts: Option<Vec<PromptWire>>,
    pub(super) resources: Option<Vec<ResourceWire>>,
    #[serde(rename = "resource-templates")]
    pub(super) resource_templates: Option<Vec<ResourceTemplateWire>>,
    pub(super) toolsets: Option<Vec<ToolsetWire>>,
    /// Schemas tools share: each tool's schema uses one as `"$ref": "#/$defs/NAME"`, as if
    /// it were in its own `$defs`. Each is a table or a string of JSON.
    pub(super) schemas: Option<IndexMap<String, serde_json::Value>>,
    /// Skills (`io.modelcontextprotocol/skills`): folders of know-how served with their
    /// files' digests.
    pub(super) skills: Option<Vec<SkillWire>>,
}

/// One `[[skills]]` entry.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct SkillWire {
    /// A folder relative to the manifest holding a `SKILL.md`; its name is the skill's.
    #[schemars(with = "String")]
    pub(super) path: Spanned<String>,
    /// OAuth scopes a caller needs to see and read it (with `[server.auth]`).
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) scopes: Option<Spanned<Vec<String>>>,
}

/// One `[[toolsets]]` entry: a named set of tools that `--toolsets` can choose.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct ToolsetWire {
    /// Letters, digits, `_` and `-`, as in `--toolsets issues,pulls`.
    #[schemars(with = "String")]
    pub(super) name: Spanned<String>,
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    /// Its tools by name, or globs over names (`"*_issue*"`); tools may also name the set.
    #[schemars(with = "Option<Vec<String>>")]
    pub(super) tools: Option<Vec<Spanned<String>>>,
}
