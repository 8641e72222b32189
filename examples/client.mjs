// A planbake client in Node 20+ (built-in fetch, no packages): look a question up, then retrieve its context.
//   node examples/client.mjs [BASE_URL] [QUESTION]
// BASE_URL defaults to http://127.0.0.1:8080 (`planbake serve`).

const base = process.argv[2] ?? "http://127.0.0.1:8080";
const question = process.argv[3] ?? "Compare parental leave for the second parent in Berlin and Amsterdam";

async function post(path, body) {
  const res = await fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const doc = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${doc.error}: ${doc.message}`);
  return doc;
}

const found = await post("/v1/lookup", { question, user: "ts-example" });
console.log(`lookup: ${found.hit ? "hit" : "miss"}, route ${found.route}, run ${found.run_id}`);
for (const step of found.plan?.steps ?? []) {
  console.log(`  step ${step.id}: ${step.query} ${JSON.stringify(step.filters ?? {})}`);
}
if (!found.hit) console.log(`  reason: ${found.reason}`);

const got = await post("/v1/retrieve", { question, user: "ts-example" });
console.log(`retrieve: ${got.context.length} chunks, ${got.searches} searches, run ${got.run_id}`);
for (const part of got.parts) {
  console.log(`  part ${part.id}: ${part.covered ? "covered" : "not covered"} [${part.context.join(", ")}]`);
}
for (const gap of got.not_covered) console.log(`  not covered: ${gap.part}: ${gap.reason}`);
console.log(JSON.stringify({ lookup_hit: found.hit, run_id: got.run_id, chunks: got.context.map((c) => c.id) }));
