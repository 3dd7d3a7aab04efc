// Generates js-vectors.json: what JavaScript (Node) prints for numbers,
// which order it enumerates keys in after a recursive sort, and how
// JSON.stringify escapes strings. Run with Node 22:
//   node gen-js-vectors.js > js-vectors.json
"use strict";
const crypto = require("crypto");

function bitsOf(x) {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(x);
  return b.toString("hex");
}

const nums = [0, -0, 1, -1, 0.1, 0.2, 0.30000000000000004, 1.5, 42, -0.0001,
  1e21, 1e20, 123456789012345680000, 1e-6, 1e-7, 1.2e-7, 0.000001, 0.0000012,
  5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
  Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 2 ** 53, 2 ** 64, 2 ** 70,
  1 / 3, 2 / 3, 100, 1e100, 1.5e300, 9.999999999999999e20, 1e22, 123e-20,
  Infinity, -Infinity, NaN, 4294967295, 4294967296, 0.5, 12.34, 1e-5, 1e-10];
for (let e = -330; e <= 310; e++) {
  nums.push(Number("1e" + e), Number("3.7e" + e), Number("9.87654321e" + e));
}
const rnd = crypto.randomBytes(8 * 1500);
for (let i = 0; i < 1500; i++) {
  nums.push(rnd.readDoubleBE(i * 8));
}
for (let i = 0; i < 300; i++) {
  nums.push(Math.floor(Math.random() * 2 ** (i % 60)) * (i % 2 ? -1 : 1));
}
const numbers = nums.map((x) => ({ bits: bitsOf(x), text: JSON.stringify(x) }));

const keySets = [
  ["9", "10", "a", "B", "_", "é"],
  ["0", "00", "01", "1", "-1", "1.0", "4294967294", "4294967295", "4294967296", " 1", "1 ", "+1"],
  ["\uffff", "\u{1F600}", "\ue000", "\ud7ff", "\u{10000}", "a", "A", "\u0000"],
  ["b", "a", "2", "1", "ab", "aa", "", "Z", "z", "~", "\u007f", "\u0080"],
  ["\u{1F600}x", "\u{1F601}", "\uff61", "\u{2F800}", "中", "日本"],
  ["123", "12", "1234567890", "999999999999", "42", "042", "0x1"],
];
const keys = keySets.map((ks) => {
  const o = {};
  for (const k of ks) o[k] = 1;
  const sorted = {};
  for (const k of Object.keys(o).sort()) sorted[k] = 1;
  return { keys: ks, order: Object.keys(JSON.parse(JSON.stringify(sorted))) };
});

const strs = [];
for (let c = 0; c < 0x100; c++) strs.push(String.fromCharCode(c));
strs.push("\u2028", "\u2029", "\ufeff", "\ufffd", "\u{1F600}", "<>&'", "a\"b\\c", "\u007f\u0080\u009f");
const strings = strs.map((s) => ({ s, json: JSON.stringify(s) }));

process.stdout.write(JSON.stringify({ numbers, keys, strings }, null, 1) + "\n");
