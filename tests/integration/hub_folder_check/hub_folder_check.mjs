// Reads Hub folders written by Sluice with readers that share no code with it: hyparquet for
// data/train.parquet, the yaml package for README.md's header, and a JSON parser of this file's
// own that keeps 64-bit integers exact (BigInt). Checks that every Parquet value equals the JSONL
// one, row for row, and that the card's counts, sizes and features match the files.
// The fixture's folders (tricky rows; zero rows) have a card of known text; the folder that
// `sluice jobs export --format hub` wrote from a real job is checked for everything but that text.
// The folder a `sluice pipeline run` exported (DPO pairs: message lists, scores) is checked the
// same way.
// Usage: node hub_folder_check.mjs TRICKY_DIR EMPTY_DIR CLI_DIR CLI_ROWS [PIPELINE_DIR PIPELINE_ROWS]
import { readFileSync, statSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { parquetMetadataAsync, parquetReadObjects, parquetSchema, asyncBufferFromFile } from "hyparquet";
import YAML from "yaml";

const here = dirname(fileURLToPath(import.meta.url));
const [trickyDir, emptyDir, cliDir, cliRows, pipelineDir, pipelineRows] = process.argv.slice(2);

// The packages loaded must be the pinned ones: a reader that changed under us is a failure.
const pins = JSON.parse(readFileSync(join(here, "package.json"), "utf8")).dependencies;
for (const [name, version] of Object.entries(pins)) {
  const installed = JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8")).version;
  assert.equal(installed, version, `${name} ${installed} is installed, ${version} is pinned`);
}

// JSON.parse, except that integer literals become BigInt (int64 values past 2^53 stay exact).
function parseJsonExact(text) {
  let i = 0;
  const ws = () => { while (/[ \t\r\n]/.test(text[i] ?? "")) i++; };
  const value = () => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const out = {};
      ws();
      if (text[i] === "}") { i++; return out; }
      for (;;) {
        ws();
        const key = value();
        ws();
        assert.equal(text[i++], ":");
        out[key] = value();
        ws();
        if (text[i] === ",") { i++; continue; }
        assert.equal(text[i++], "}");
        return out;
      }
    }
    if (c === "[") {
      i++;
      const out = [];
      ws();
      if (text[i] === "]") { i++; return out; }
      for (;;) {
        out.push(value());
        ws();
        if (text[i] === ",") { i++; continue; }
        assert.equal(text[i++], "]");
        return out;
      }
    }
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const s = JSON.parse(text.slice(i, j + 1));
      i = j + 1;
      return s;
    }
    const m = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    assert.ok(m, `bad JSON at ${i}: ${text.slice(i, i + 20)}`);
    i += m[0].length;
    if (m[0] === "true") return true;
    if (m[0] === "false") return false;
    if (m[0] === "null") return null;
    return /^-?\d+$/.test(m[0]) ? BigInt(m[0]) : Number(m[0]);
  };
  const out = value();
  ws();
  assert.equal(i, text.length, "trailing text after the JSON value");
  return out;
}

// Strict equality: same types (BigInt stays BigInt), -0 apart from 0, same keys in any order.
function sameValue(a, b, where) {
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") {
    assert.ok(typeof a === typeof b && Object.is(a, b), `${where}: parquet ${show(a)} != jsonl ${show(b)}`);
    return;
  }
  assert.equal(Array.isArray(a), Array.isArray(b), `${where}: array and not array`);
  const keys = Object.keys(a);
  assert.deepEqual(keys.slice().sort(), Object.keys(b).sort(), `${where}: keys differ`);
  for (const k of keys) sameValue(a[k], b[k], `${where}.${k}`);
}
const show = (v) => (typeof v === "bigint" ? `${v}n` : JSON.stringify(v)?.slice(0, 80));

// The Hub's feature syntax, derived from the Parquet schema as hyparquet reads it.
function featureOf(node) {
  const e = node.element;
  if (!node.children.length) {
    if (e.type === "BYTE_ARRAY" && (e.converted_type === "UTF8" || e.logical_type?.type === "STRING")) return { dtype: "string" };
    const dtypes = { INT64: "int64", DOUBLE: "float64", BOOLEAN: "bool" };
    assert.ok(dtypes[e.type], `no Hub dtype for ${e.name}: ${e.type}`);
    return { dtype: dtypes[e.type] };
  }
  assert.equal(e.converted_type, "LIST", `${e.name} is a group but not a LIST`);
  const repeated = node.children[0];
  assert.equal(repeated.element.repetition_type, "REPEATED");
  const item = repeated.children[0];
  if (!item.children.length) return { sequence: featureOf(item).dtype };
  return { list: item.children.map((f) => ({ name: f.element.name, ...featureOf(f) })) };
}

async function checkFolder(dir, { expectRows, minRowGroups, isFixture }) {
  // JSONL: one object per line.
  const jsonlText = readFileSync(join(dir, "data/train.jsonl"), "utf8");
  const lines = jsonlText === "" ? [] : jsonlText.replace(/\n$/, "").split("\n");
  const jsonl = lines.map(parseJsonExact);
  assert.equal(jsonl.length, expectRows, `${dir}: JSONL rows`);

  // Parquet, through hyparquet.
  const parquetPath = join(dir, "data/train.parquet");
  const file = await asyncBufferFromFile(parquetPath);
  const metadata = await parquetMetadataAsync(file);
  assert.match(metadata.created_by, /^sluice version /);
  assert.equal(Number(metadata.num_rows), expectRows, `${dir}: Parquet num_rows`);
  assert.ok(metadata.row_groups.length >= minRowGroups, `${dir}: ${metadata.row_groups.length} row groups`);
  const rows = expectRows === 0 ? [] : await parquetReadObjects({ file });
  assert.equal(rows.length, expectRows, `${dir}: Parquet rows read`);
  const tree = parquetSchema(metadata);
  const columns = tree.children.map((c) => c.element.name);
  for (let r = 0; r < rows.length; r++) {
    assert.deepEqual(Object.keys(jsonl[r]), columns, `row ${r}: JSONL keys are the columns in order`);
    for (const c of columns) sameValue(rows[r][c], jsonl[r][c], `row ${r}.${c}`);
  }

  // README.md: the YAML header between the first two "---" lines.
  const card = readFileSync(join(dir, "README.md"), "utf8");
  const m = /^---\n([\s\S]*?)\n---\n/.exec(card);
  assert.ok(m, `${dir}: README.md opens with a YAML header`);
  const doc = YAML.parseDocument(m[1], { strict: true, uniqueKeys: true, prettyErrors: true });
  assert.deepEqual(doc.errors, [], `${dir}: YAML errors`);
  assert.deepEqual(doc.warnings, [], `${dir}: YAML warnings`);
  const header = doc.toJS();
  if (isFixture) {
    assert.equal(header.pretty_name, "Tricky: \"pairs\" #1 'x'\nsecond\tline \x01 \u{1F600}");
    assert.equal(header.license, "cc-by-4.0");
  }
  assert.deepEqual(header.tags.slice(0, 2), ["synthetic", "sluice"]);
  assert.deepEqual(header.task_categories, ["text-generation"]);
  assert.deepEqual(header.size_categories, [expectRows < 1000 ? "n<1K" : "1K<n<10K"]);
  assert.deepEqual(header.configs, [{ config_name: "default", data_files: [{ split: "train", path: "data/train.parquet" }] }]);
  for (const { path } of header.configs[0].data_files) assert.ok(existsSync(join(dir, path)), `${path} exists`);
  const info = header.dataset_info;
  assert.equal(info.splits.length, 1);
  assert.equal(info.splits[0].name, "train");
  assert.equal(info.splits[0].num_examples, expectRows, `${dir}: num_examples`);
  assert.equal(info.download_size, statSync(parquetPath).size, `${dir}: download_size`);
  const chunkBytes = metadata.row_groups.reduce((n, g) => n + Number(g.total_byte_size), 0);
  assert.equal(info.splits[0].num_bytes, chunkBytes, `${dir}: num_bytes`);
  assert.equal(info.dataset_size, chunkBytes, `${dir}: dataset_size`);
  const features = tree.children.map((c) => ({ name: c.element.name, ...featureOf(c) }));
  assert.deepEqual(info.features, features, `${dir}: features`);
  assert.ok(card.includes("## Provenance"), `${dir}: provenance section`);
  if (isFixture) {
    assert.ok(card.includes("````\nsteps:\n  - generate: {n: 4}\n  # a \"hostile\": value ```\n````\n"),
              `${dir}: the job file verbatim in a fence`);
  }
  return { rows: rows.length, rowGroups: metadata.row_groups.length };
}

const tricky = await checkFolder(trickyDir, { expectRows: 2503, minRowGroups: 3, isFixture: true });
const empty = await checkFolder(emptyDir, { expectRows: 0, minRowGroups: 0, isFixture: true });
const cli = await checkFolder(cliDir, { expectRows: Number(cliRows), minRowGroups: 1, isFixture: false });
let pipelineNote = "";
if (pipelineDir) {
  assert.ok(Number(pipelineRows) > 0, "the pipeline exported no rows");
  const pipeline = await checkFolder(pipelineDir, { expectRows: Number(pipelineRows), minRowGroups: 1, isFixture: false });
  pipelineNote = `, ${pipeline.rows} DPO pairs from sluice pipeline run`;
}
console.log(`hub_folder_check: ${tricky.rows} rows in ${tricky.rowGroups} row groups equal to the JSONL, ` +
            `${empty.rows} rows in the empty folder, ${cli.rows} rows from sluice jobs export --format hub` +
            `${pipelineNote}; every card parses and matches its files`);
console.log(`${pipelineDir ? 4 : 3} passed, 0 failed`);
