// Reads every skill mcp-serve serves with the official TypeScript client's SkillsClient
// (`@modelcontextprotocol/client/ext/skills`), which checks each file's size and digest, and
// each SKILL.md's frontmatter, against the server's entry. Prints one JSON document.
//
//   node skills_client.mjs MODE stdio BINARY MANIFEST
//   node skills_client.mjs MODE http URL
//
// MODE is the client's version negotiation: legacy (initialize) | auto (2026 if offered).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

const [mode, kind, ...rest] = process.argv.slice(2);
const client = new Client({ name: "mcp-serve-skills", version: "1.0.0" }, { versionNegotiation: { mode } });
const transport =
  kind === "http"
    ? new StreamableHTTPClientTransport(new URL(rest[0]))
    : new StdioClientTransport({ command: rest[0], args: ["--config", rest[1]], stderr: "ignore" });

const report = { skills: [], errors: [] };
try {
  await client.connect(transport);
  report.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  const skills = new SkillsClient(client);
  report.supported = skills.supported;
  report.directoryRead = skills.directoryRead;
  const listed = await skills.list();
  report.invalid = listed.invalid.length;
  for (const entry of listed.skills) {
    const files = [];
    for (const resource of entry.resources) {
      // Verified against the entry: a wrong size, digest or frontmatter throws.
      const file = await skills.read(entry, resource.uri);
      files.push({ uri: file.uri, size: file.bytes.byteLength, verified: file.verified });
    }
    const got = await skills.get(entry.uri);
    const root = entry.uri.slice(0, -"/SKILL.md".length);
    const folder = skills.directoryRead ? await skills.readDirectory(root) : null;
    report.skills.push({
      uri: entry.uri,
      name: entry.frontmatter.name,
      files,
      gotSame: JSON.stringify(got.skill) === JSON.stringify(entry),
      folder: folder?.resources?.map((child) => ({ uri: child.uri, mimeType: child.mimeType ?? null })) ?? null,
    });
  }
  // A file the entry does not list is a verification failure, before any request.
  try {
    await skills.read(listed.skills[0], "not-listed.md");
    report.unlisted = "read";
  } catch (error) {
    report.unlisted = error.constructor.name;
  }
} catch (error) {
  report.errors.push(String(error?.stack ?? error));
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + "\n");
