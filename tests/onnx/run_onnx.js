// Runs an ONNX model exported by Plexus in ONNX Runtime (npm onnxruntime-node, CPU), for the
// tests that compare its outputs with Plexus's own (tests/test_onnx_*.cpp).
//
//   node run_onnx.js MODEL.onnx --input X.f32 --shape N,D1,... --output Y.f32 [--output-name NAME]
//   node run_onnx.js MODEL.onnx --idx-images IMAGES-idx3-ubyte --batch B --output Y.f32
//   node run_onnx.js MODEL.onnx --feed NAME:X.f32:N,D1,... [--feed ...] --output Y.f32
//
// --input: float32 values (little-endian) of the input "x" with that shape. --idx-images: every
// image of an IDX file as raw units, pixel * (1/255) in float32 (as Plexus's reader scales
// them), [N, 1, rows, cols], run B images at a time (the last batch may be smaller). Writes the
// output "logits" (or --output-name's, of a model with several losses) of every example, in
// order, as float32 to --output and prints. --feed (repeated): a model with several inputs, each
// named, with its file and shape; they are run as one batch.
// {"output": NAME, "dims": [...]} on stdout. onnxruntime-node is found through NODE_PATH.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function fail(message) {
  process.stderr.write(`run_onnx: ${message}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  if (argv.length < 1) fail('usage: run_onnx.js MODEL.onnx (--input X --shape S | --idx-images F --batch B) --output Y');
  const args = {model: argv[0], feed: []};
  for (let i = 1; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || i + 1 >= argv.length) fail(`bad argument '${argv[i]}'`);
    if (argv[i] === '--feed') args.feed.push(argv[i + 1]);
    else args[argv[i].slice(2)] = argv[i + 1];
  }
  if (!args.output) fail('--output is required');
  return args;
}

// The images of an IDX file (magic 2051: unsigned bytes, 3 dimensions), in raw units.
function readIdxImages(file) {
  const b = fs.readFileSync(file);
  if (b.length < 16 || b.readUInt32BE(0) !== 2051) fail(`${file}: not an IDX image file (magic 2051)`);
  const [n, rows, cols] = [b.readUInt32BE(4), b.readUInt32BE(8), b.readUInt32BE(12)];
  if (b.length !== 16 + n * rows * cols) fail(`${file}: ${b.length} bytes, expected ${16 + n * rows * cols}`);
  const scale = Math.fround(1 / 255);
  const data = new Float32Array(n * rows * cols);
  for (let i = 0; i < data.length; ++i) data[i] = b[16 + i] * scale;  // rounded to float32 as in C++
  return {data, dims: [n, 1, rows, cols]};
}

function readInput(file, shape) {
  const dims = shape.split(',').map(Number);
  const b = fs.readFileSync(file);
  const count = dims.reduce((a, d) => a * d, 1);
  if (b.length !== 4 * count) fail(`${file}: ${b.length} bytes, but shape [${dims}] needs ${4 * count}`);
  return {data: new Float32Array(b.buffer, b.byteOffset, count), dims};
}

// Several named inputs, run as one batch.
async function runFeeds(args, name) {
  const session = await ort.InferenceSession.create(args.model);
  const feeds = {};
  for (const feed of args.feed) {
    const [input, file, shape] = feed.split(':');
    if (!shape) fail(`--feed ${feed}: expected NAME:FILE:SHAPE`);
    const x = readInput(file, shape);
    feeds[input] = new ort.Tensor('float32', x.data, x.dims);
  }
  if ([...session.inputNames].sort().join() !== Object.keys(feeds).sort().join() || !session.outputNames.includes(name))
    fail(`expected inputs ${Object.keys(feeds)} and an output ${name}; the model has ${session.inputNames} and ` +
         `${session.outputNames}`);
  const y = (await session.run(feeds))[name];
  fs.writeFileSync(args.output, Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
  process.stdout.write(JSON.stringify({output: name, dims: y.dims}) + '\n');
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.feed.length) return runFeeds(args, args['output-name'] || 'logits');
  const x = args['idx-images'] ? readIdxImages(args['idx-images']) : readInput(args.input, args.shape);
  const n = x.dims[0], perExample = x.data.length / n;
  const batch = args.batch ? Number(args.batch) : n;
  const name = args['output-name'] || 'logits';
  const session = await ort.InferenceSession.create(args.model);
  if (session.inputNames.join() !== 'x' || session.outputNames[0] !== 'logits' || !session.outputNames.includes(name))
    fail(`expected input x and outputs logits, ... and ${name}; the model has ${session.inputNames} and ` +
         `${session.outputNames}`);
  const parts = [];
  let outDims = null;
  for (let start = 0; start < n; start += batch) {
    const count = Math.min(batch, n - start);
    const input = new ort.Tensor('float32', x.data.subarray(start * perExample, (start + count) * perExample),
                                 [count, ...x.dims.slice(1)]);
    const y = (await session.run({x: input}))[name];
    if (y.dims[0] !== count) fail(`a batch of ${count} gave ${name} [${y.dims}]`);
    outDims = outDims || y.dims.slice(1);
    parts.push(Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
  }
  fs.writeFileSync(args.output, Buffer.concat(parts));
  process.stdout.write(JSON.stringify({output: name, dims: [n, ...outDims]}) + '\n');
}

main().catch((e) => fail(e.message));
