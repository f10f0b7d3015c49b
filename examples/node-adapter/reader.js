#!/usr/bin/env node
// An ASR stream reader for the asr-ctk adapter protocol (version 1), written from
// PROTOCOL.md ("Persistent mode", "One-shot mode", "Readers and the reading"),
// schemas/reading.schema.json, schemas/protocol/*.json and the spec text alone.
// Node 20, standard library only.
'use strict';

const fs = require('node:fs');

const IMPLEMENTATION = {
  name: 'asr-node-reader',
  version: '0.1.0',
  language: 'javascript',
};

// ---------------------------------------------------------------------------
// Strict JSON (RFC 8259) over one decoded line.
//
// JSON.parse is not used: it turns 1e400 into Infinity, loses the digits of
// integers beyond 2^53 and accepts lone surrogate escapes. This parser keeps
// every number's source text; of duplicate member names the last is kept, as
// RFC 8259 section 4 says many implementations do (PROTOCOL.md is silent: see
// README.md).
// It is iterative, so a deeply nested line cannot exhaust the call stack.
// ---------------------------------------------------------------------------

/** A JSON number, kept as its source text. */
class JsonNumber {
  constructor(text) {
    this.text = text;
  }
}

/** A JSON object: members by name, the last of a repeated name kept. */
class JsonObject {
  constructor() {
    this.map = new Map();
  }
  has(name) {
    return this.map.has(name);
  }
  get(name) {
    return this.map.get(name);
  }
}

class JsonError extends Error {}

/**
 * A line beyond what the kit's decisions let a reader refuse: a number no double holds
 * (decision number-range, ASR-X-005) or nesting deeper than 128 levels (decision
 * nesting-depth, ASR-X-006). A reader may read such a line or refuse it; this one refuses,
 * as the reference does, so that the two agree on every stream.
 */
class LimitError extends JsonError {
  constructor(rule, why) {
    super(why);
    this.rule = rule;
  }
}

/** The deepest nesting read: the line's object is at depth 1. */
const MAX_DEPTH = 128;

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** Parses `text` as exactly one JSON value; throws JsonError otherwise. */
function parseJson(text) {
  let i = 0;
  const n = text.length;
  const fail = (why) => {
    throw new JsonError(`${why} at character ${i}`);
  };
  const skipWs = () => {
    while (i < n && WS.has(text.charCodeAt(i))) i++;
  };
  const parseString = () => {
    // text[i] is the opening quote
    i++;
    let out = '';
    let start = i;
    for (;;) {
      if (i >= n) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        // An escaped lone surrogate is no Unicode text: the line is not JSON
        // in UTF-8 (README.md, "Lone surrogates").
        if (/[\uD800-\uDFFF]/u.test(out)) fail('a \\u escape of a lone surrogate');
        return out;
      }
      if (c < 0x20) fail('raw control character in string');
      if (c === 0x5c) {
        out += text.slice(start, i);
        i++;
        if (i >= n) fail('unterminated escape');
        const e = text[i];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            const hex = text.slice(i + 1, i + 5);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('bad \\u escape');
            out += String.fromCharCode(parseInt(hex, 16));
            i += 4;
            break;
          }
          default:
            fail('bad escape');
        }
        i++;
        start = i;
        continue;
      }
      i++;
    }
  };
  const NUM = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  const parseNumber = () => {
    NUM.lastIndex = i;
    const m = NUM.exec(text);
    if (!m || m[0].length === 0 || m[0] === '-') fail('bad number');
    i += m[0].length;
    if (!Number.isFinite(Number(m[0]))) {
      throw new LimitError('ASR-X-005', `a number beyond a double at character ${i}`);
    }
    return new JsonNumber(m[0]);
  };
  const parseLiteral = () => {
    for (const [word, value] of [['true', true], ['false', false], ['null', null]]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return value;
      }
    }
    fail('unexpected character');
    return undefined;
  };

  // Explicit stack of open containers: {kind: 'o'|'a', value, key}
  const stack = [];
  let result;
  let haveResult = false;

  const emit = (value) => {
    if (stack.length === 0) {
      result = value;
      haveResult = true;
      return;
    }
    const top = stack[stack.length - 1];
    if (top.kind === 'a') {
      top.value.push(value);
    } else {
      top.value.map.set(top.key, value);
    }
  };

  // state: 'value' (expect a value), 'after' (after a value in a container)
  let state = 'value';
  skipWs();
  for (;;) {
    if (state === 'value') {
      skipWs();
      if (i >= n) fail('unexpected end');
      const c = text[i];
      if (c === '{') {
        i++;
        skipWs();
        const obj = new JsonObject();
        if (text[i] === '}') {
          i++;
          emit(obj);
          state = 'after';
        } else {
          if (stack.length >= MAX_DEPTH) throw new LimitError('ASR-X-006', `nesting deeper than ${MAX_DEPTH} levels at character ${i}`);
          stack.push({ kind: 'o', value: obj, key: null });
          if (text[i] !== '"') fail('expected member name');
          stack[stack.length - 1].key = parseString();
          skipWs();
          if (text[i] !== ':') fail("expected ':'");
          i++;
          state = 'value';
        }
        continue;
      }
      if (c === '[') {
        i++;
        skipWs();
        if (text[i] === ']') {
          i++;
          emit([]);
          state = 'after';
        } else {
          if (stack.length >= MAX_DEPTH) throw new LimitError('ASR-X-006', `nesting deeper than ${MAX_DEPTH} levels at character ${i}`);
          stack.push({ kind: 'a', value: [], key: null });
          state = 'value';
        }
        continue;
      }
      let v;
      if (c === '"') v = parseString();
      else if (c === '-' || (c >= '0' && c <= '9')) v = parseNumber();
      else v = parseLiteral();
      emit(v);
      state = 'after';
      continue;
    }
    // state === 'after'
    if (stack.length === 0) break;
    skipWs();
    const top = stack[stack.length - 1];
    const c = text[i];
    if (c === ',') {
      i++;
      skipWs();
      if (top.kind === 'o') {
        if (text[i] !== '"') fail('expected member name');
        top.key = parseString();
        skipWs();
        if (text[i] !== ':') fail("expected ':'");
        i++;
      }
      state = 'value';
      continue;
    }
    if ((top.kind === 'o' && c === '}') || (top.kind === 'a' && c === ']')) {
      i++;
      stack.pop();
      emit(top.value);
      state = 'after';
      continue;
    }
    fail(top.kind === 'o' ? "expected ',' or '}'" : "expected ',' or ']'");
  }
  skipWs();
  if (i !== n || !haveResult) fail('text after the value');
  return result;
}

// ---------------------------------------------------------------------------
// Exact comparison of JSON numbers by their source text (seqs may be beyond
// 2^53, or written as 1e2 or 1.0).
// ---------------------------------------------------------------------------

/** Splits a JSON number's text into sign, digits (BigInt) and a power of ten. */
function decimalOf(text) {
  const m = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
  const neg = m[1] === '-';
  const frac = m[3] || '';
  let digits = (m[2] + frac).replace(/^0+/, '');
  let exp = BigInt(m[4] || '0') - BigInt(frac.length);
  if (digits === '') return { neg: false, digits: 0n, exp: 0n };
  const trimmed = digits.replace(/0+$/, '');
  exp += BigInt(digits.length - trimmed.length);
  digits = trimmed;
  return { neg, digits: BigInt(digits), exp, len: BigInt(digits.length) };
}

/** -1, 0 or 1: how the number `a` compares with `b` (both JSON number texts). */
function compareNumbers(a, b) {
  const x = decimalOf(a);
  const y = decimalOf(b);
  const sx = x.digits === 0n ? 0 : x.neg ? -1 : 1;
  const sy = y.digits === 0n ? 0 : y.neg ? -1 : 1;
  if (sx !== sy) return sx < sy ? -1 : 1;
  if (sx === 0) return 0;
  // Same sign: compare magnitudes. The order of magnitude is len + exp.
  let mag;
  const ox = x.len + x.exp;
  const oy = y.len + y.exp;
  if (ox !== oy) {
    mag = ox < oy ? -1 : 1;
  } else {
    // Same order of magnitude: align the digit strings.
    let dx = x.digits;
    let dy = y.digits;
    if (x.exp > y.exp) dx *= 10n ** (x.exp - y.exp);
    else if (y.exp > x.exp) dy *= 10n ** (y.exp - x.exp);
    mag = dx === dy ? 0 : dx < dy ? -1 : 1;
  }
  return sx < 0 ? -mag : mag;
}

// ---------------------------------------------------------------------------
// Session references (PROTOCOL.md, "session.unresolved").
// ---------------------------------------------------------------------------

const isControl = (cp) => cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f);
// ECMAScript's \s: the white space of the SessionRef patterns of the schemas
// (ECMA-262 regular expressions), U+FEFF included.
const isSpace = (ch) => /^\s$/u.test(ch);

/**
 * Parses a session reference: {agent, parts: [Uint8Array...], fragment} or
 * null when the string is not one.
 */
function parseSessionRef(s) {
  if (typeof s !== 'string') return null;
  const colon = s.indexOf(':');
  if (colon <= 0) return null;
  const agent = s.slice(0, colon);
  for (const ch of agent) {
    const cp = ch.codePointAt(0);
    if (ch === '#' || ch === '%' || isControl(cp) || isSpace(ch)) return null;
  }
  let rest = s.slice(colon + 1);
  let fragment = null;
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
    if (fragment.length === 0) return null;
  }
  if (rest.length === 0) return null;
  // Each part between raw ':' decoded to its octets.
  const parts = [];
  for (const raw of rest.split(':')) {
    const bytes = [];
    let k = 0;
    while (k < raw.length) {
      const cp = raw.codePointAt(k);
      const ch = String.fromCodePoint(cp);
      if (ch === '%') {
        const hex = raw.slice(k + 1, k + 3);
        if (!/^[0-9a-fA-F]{2}$/.test(hex)) return null;
        bytes.push(parseInt(hex, 16));
        k += 3;
        continue;
      }
      if (isControl(cp)) return null;
      for (const b of Buffer.from(ch, 'utf8')) bytes.push(b);
      k += ch.length;
    }
    parts.push(Uint8Array.from(bytes));
  }
  return { agent, parts, fragment };
}

const hex2 = (b) => '%' + b.toString(16).toUpperCase().padStart(2, '0');

/** One decoded part in canonical form: only %, :, # and controls escaped. */
function canonicalPart(bytes) {
  let out = '';
  let k = 0;
  const dec = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  while (k < bytes.length) {
    const b = bytes[k];
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    let ch = null;
    if (len > 0 && k + len <= bytes.length) {
      try {
        ch = dec.decode(bytes.subarray(k, k + len));
      } catch {
        ch = null;
      }
    }
    if (ch === null) {
      // An octet that is no part of a UTF-8 character stays escaped.
      out += hex2(b);
      k += 1;
      continue;
    }
    const cp = ch.codePointAt(0);
    if (ch === '%' || ch === ':' || ch === '#' || isControl(cp)) {
      for (let j = k; j < k + len; j++) out += hex2(bytes[j]);
    } else {
      out += ch;
    }
    k += len;
  }
  return out;
}

function canonicalRef(ref) {
  return ref.agent + ':' + ref.parts.map(canonicalPart).join(':');
}

// ---------------------------------------------------------------------------
// Record references (key=value or a record id).
// ---------------------------------------------------------------------------

/**
 * {key, value} when `s` has the key=value form of a ref: a key that is a
 * member name (an ASCII letter, then letters, digits or '_', as messageId,
 * callId, planId), then '=' and the value. ASR-062, which defines the form, is
 * not in the spec in hand: see README.md, "Guesses".
 */
function keyValueRef(s) {
  const m = /^([A-Za-z][A-Za-z0-9_]*)=/.exec(s);
  if (!m) return null;
  return { key: m[1], value: s.slice(m[0].length) };
}

// The native-id members a key=value ref is resolved by, as the spec in hand
// writes refs (`messageId=...`, `callId=...`, `planId=...`) and records carry
// ids (turnId, inferenceId). A ref of another key is resolved as a record id.
const REF_KEYS = new Set(['messageId', 'callId', 'planId', 'turnId', 'inferenceId']);

// ---------------------------------------------------------------------------
// Reading one stream.
// ---------------------------------------------------------------------------

const str = (v) => (typeof v === 'string' ? v : null);
const obj = (v) => (v instanceof JsonObject ? v : null);
const member = (o, name) => (o instanceof JsonObject ? o.get(name) : undefined);

/** Decodes and parses the stream's lines, or returns a refusal. */
function splitStream(bytes) {
  const lines = [];
  let start = 0;
  let lineNo = 0;
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    const last = end < 0;
    if (last) end = bytes.length;
    lineNo++;
    let slice = bytes.subarray(start, end);
    // A byte order mark is allowed before the first line only.
    if (lineNo === 1 && slice.length >= 3 && slice[0] === 0xef && slice[1] === 0xbb && slice[2] === 0xbf) {
      slice = slice.subarray(3);
    }
    let text;
    try {
      text = decoder.decode(slice);
    } catch {
      return { refused: { rule: 'ASR-X-001', line: lineNo, message: 'bytes that are not UTF-8' }, lines };
    }
    let value;
    try {
      value = parseJson(text);
    } catch (e) {
      if (e instanceof LimitError) {
        return { refused: { rule: e.rule, line: lineNo, message: e.message }, lines };
      }
      const rule = lineNo === 1 ? 'ASR-X-007' : 'ASR-X-003';
      return { refused: { rule, line: lineNo, message: `not JSON: ${e.message}` }, lines };
    }
    if (!(value instanceof JsonObject)) {
      const rule = lineNo === 1 ? 'ASR-X-007' : 'ASR-X-003';
      return { refused: { rule, line: lineNo, message: 'the line is not a JSON object' }, lines };
    }
    lines.push({ line: lineNo, value });
    start = end + 1;
  }
  if (lines.length === 0) {
    return { refused: { rule: 'ASR-X-007', line: 1, message: 'an empty stream has no session header' }, lines };
  }
  if (str(lines[0].value.get('type')) !== 'session') {
    return { refused: { rule: 'ASR-X-007', line: 1, message: 'the first line is not a session header' }, lines };
  }
  return { refused: null, lines };
}

/** The session named by a header, as {agent, parts}, or null. */
function ownSession(header) {
  const agent = str(member(obj(header.get('agent')), 'name'));
  const sessionId = str(header.get('sessionId'));
  if (agent === null || sessionId === null) return null;
  const parts = [];
  const ns = str(header.get('namespace'));
  if (ns !== null) parts.push(Buffer.from(ns, 'utf8'));
  parts.push(Buffer.from(sessionId, 'utf8'));
  return { agent, parts: parts.map((p) => Uint8Array.from(p)) };
}

function sameSession(a, b) {
  if (a.agent !== b.agent || a.parts.length !== b.parts.length) return false;
  for (let k = 0; k < a.parts.length; k++) {
    if (Buffer.compare(Buffer.from(a.parts[k]), Buffer.from(b.parts[k])) !== 0) return false;
  }
  return true;
}

const PARENT_FACETS = ['spawnedBy', 'forkedFrom', 'continues', 'relatedUnknown'];
const PARENT_MODES = new Set(['copied', 'referenced', 'rendered']);

/** The session references a lineage object names. */
function lineageRefs(lineage, out) {
  const l = obj(lineage);
  if (!l) return;
  for (const facet of PARENT_FACETS) out.push(member(obj(l.get(facet)), 'session'));
  out.push(member(obj(l.get('inherits')), 'from'));
  const ex = l.get('executedBy');
  if (Array.isArray(ex)) for (const e of ex) out.push(member(obj(e), 'session'));
}

/**
 * Reads parsed lines into {reading, sessions}: `sessions` are the session
 * references named, to be resolved against every stream of the case.
 */
function readLines(lines) {
  const header = lines[0].value;
  const rest = lines.slice(1);
  const headerId = str(header.get('id'));

  // Records: every other line with a (string) id; the first of an id wins.
  const records = [];
  const byId = new Map();
  for (let k = 0; k < rest.length; k++) {
    const v = rest[k].value;
    const id = str(v.get('id'));
    // The header is the first record of its id, though not listed.
    if (id === null || byId.has(id) || id === headerId) continue;
    const rec = { id, v, pos: k + 1, type: str(v.get('type')) };
    records.push(rec);
    byId.set(id, rec);
  }
  const headerRec = { id: headerId, v: header, pos: 0, type: 'session', header: true };

  // A ref in key=value form names every record whose member `key` is the
  // string `value` (the revisions of a message share its messageId); any
  // other ref names the first record of its id (the header included).
  const resolve = (ref) => {
    if (typeof ref !== 'string') return [];
    const kv = keyValueRef(ref);
    if (kv && REF_KEYS.has(kv.key)) {
      const found = records.filter((r) => str(r.v.get(kv.key)) === kv.value);
      if (str(header.get(kv.key)) === kv.value) found.unshift(headerRec);
      return found;
    }
    if (headerId !== null && ref === headerId) return [headerRec];
    return byId.has(ref) ? [byId.get(ref)] : [];
  };

  // Supersession: a later record naming an earlier one. When several name a
  // record, the last of them continues its chain.
  const supersededBy = new Map();
  // Each revision and the record it revises (every one, a fork's both branches included).
  const revisionOf = new Map();
  for (const r of records) {
    if (!r.v.has('supersedes')) continue;
    for (const target of resolve(r.v.get('supersedes'))) {
      if (!target.header && target.pos < r.pos) {
        supersededBy.set(target, r);
        revisionOf.set(r, target);
      }
    }
  }
  // Lineage of the header and the declarations.
  const declarations = rest.filter((l) => str(l.value.get('type')) === 'declaration').map((l) => l.value);
  const lineages = [obj(header.get('lineage')), ...declarations.map((d) => obj(d.get('lineage')))].filter(Boolean);

  let root = 'unknown';
  if (lineages.some((l) => l.has('root') && l.get('root') === true)) root = 'yes';
  for (const l of lineages) {
    const parent =
      PARENT_FACETS.some((f) => l.has(f)) || PARENT_MODES.has(str(member(obj(l.get('inherits')), 'mode')));
    if (parent) root = 'no';
  }

  // Effective inherits: the header's, replaced by each declaration's.
  let inherits = member(obj(header.get('lineage')), 'inherits');
  for (const d of declarations) {
    const l = obj(d.get('lineage'));
    // A declaration "that has one": an inherits that is no object (null, 5)
    // is none.
    if (l && obj(l.get('inherits'))) inherits = l.get('inherits');
  }
  const mode = str(member(obj(inherits), 'mode'));
  const mirror = str(header.get('authority')) === 'mirror';
  let prefixSeq = null; // JSON number text, or 'empty'
  let localNamesRecord = false;
  if (mode === 'copied') {
    const local = str(member(obj(inherits), 'localThroughId'));
    if (local !== null) {
      if (headerId !== null && local === headerId) {
        // ASR-415's "at or below that record's seq" holds for the header too:
        // a record with the header's seq (0) is in the prefix.
        localNamesRecord = true;
        const seq = header.get('seq');
        prefixSeq = seq instanceof JsonNumber ? seq.text : 'empty';
      } else if (byId.has(local)) {
        localNamesRecord = true;
        const seq = byId.get(local).v.get('seq');
        prefixSeq = seq instanceof JsonNumber ? seq.text : 'empty';
      }
    }
  }
  const inPrefix = (r) => {
    if (prefixSeq === null || prefixSeq === 'empty' || r.type === 'declaration') return false;
    const seq = r.v.get('seq');
    return seq instanceof JsonNumber && compareNumbers(seq.text, prefixSeq) <= 0;
  };
  const originalMode = mode === 'none' || mode === 'referenced' || mode === 'rendered' || localNamesRecord;
  const originality = (r) => {
    if (r.v.has('copiedFrom')) return 'copy';
    if (mirror) return 'unknown';
    if (inPrefix(r)) return 'copy';
    if (originalMode) return 'original';
    return 'unknown';
  };

  // Deliveries, each taken at its latest revision: that revision's status, for
  // the message it names (or, when it names none, the one its nearest earlier
  // revision names).
  // The ends of the chains: deliveries no delivery revises. The two ends of a forked
  // chain are two latest revisions, either of which confirms (decision supersedes-fork).
  const delivered = new Set();
  const revised = new Set();
  for (const [by, target] of revisionOf) {
    if (by.type === 'delivery' && target.type === 'delivery') revised.add(target);
  }
  const ends = records.filter((r) => r.type === 'delivery' && !revised.has(r));
  for (const end of ends) {
    const status = str(end.v.get('status'));
    if (status !== 'sent' && status !== 'delivered') continue;
    let cur = end;
    const seen = new Set();
    while (cur && !cur.v.has('message') && !seen.has(cur)) {
      seen.add(cur);
      cur = revisionOf.get(cur);
      if (cur && cur.type !== 'delivery') cur = undefined;
    }
    if (!cur || !cur.v.has('message')) continue;
    for (const target of resolve(cur.v.get('message'))) delivered.add(target);
  }

  const out = Object.create(null);
  const own = [];
  let mayIncludeCopies = false;
  for (const r of records) {
    const o = originality(r);
    if (o === 'original') own.push(r.id);
    if (o === 'unknown') mayIncludeCopies = true;
    const entry = { type: r.type, superseded: supersededBy.has(r), originality: o };
    if (r.type === 'message') {
      entry.contextView = !(str(r.v.get('audience')) === 'user' || str(r.v.get('status')) === 'withdrawn');
      entry.delivered = delivered.has(r);
      const content = r.v.get('content');
      entry.parts = Array.isArray(content) ? content.map((p) => readPart(p, r.v)) : [];
    }
    out[r.id] = entry;
  }

  // Sessions named: lineage facets, childSession, copiedFrom.session and
  // derivedFrom entries that are session references with a # part.
  const named = [];
  for (const l of lineages) lineageRefs(l, named);
  // Every line's, the header's copiedFrom included; derivedFrom is a
  // message's member.
  for (const l of lines) {
    const v = l.value;
    const type = str(v.get('type'));
    if (type === 'subagent' && l !== lines[0]) named.push(v.get('childSession'));
    named.push(member(obj(v.get('copiedFrom')), 'session'));
    const df = v.get('derivedFrom');
    if (type === 'message' && Array.isArray(df)) {
      for (const e of df) {
        if (typeof e === 'string' && e.includes('#') && !keyValueRef(e)) named.push(e);
      }
    }
  }
  const sessions = named.map(parseSessionRef).filter(Boolean);

  return {
    own: ownSession(header),
    sessions,
    root,
    records: out,
    totals: { ownRecords: own, mayIncludeCopies },
  };
}

const RENDER = {
  text: 'text',
  image: 'media',
  audio: 'media',
  resource_link: 'resource',
  resource: 'resource',
  data: 'data',
  refusal: 'refusal',
  opaque: 'opaque',
};

function readPart(p, message) {
  const part = obj(p);
  const type = str(member(part, 'type'));
  const effective = (name) => {
    const own = str(member(part, name));
    if (own !== null) return own;
    return str(message.get(name));
  };
  let render;
  const index = [];
  const text = str(member(part, 'text'));
  if (type === 'reasoning') {
    // A visibility that is not a string is no visibility: absent.
    const vis = str(part.get('visibility')) ?? undefined;
    render = vis === 'full' ? 'reasoning-full' : vis === 'summary' ? 'reasoning-summary' : 'reasoning-hidden';
    if ((vis === 'full' || vis === undefined) && text !== null) index.push(text);
    if (vis === 'summary') {
      const summary = part.get('summary');
      if (Array.isArray(summary)) for (const s of summary) if (typeof s === 'string') index.push(s);
    }
  } else if (type !== null && Object.prototype.hasOwnProperty.call(RENDER, type)) {
    render = RENDER[type];
    if ((type === 'text' || type === 'refusal') && text !== null) index.push(text);
    if (type === 'resource') {
      const t = str(member(obj(part.get('resource')), 'text'));
      if (t !== null) index.push(t);
    }
  } else {
    render = 'skipped';
  }
  return {
    type,
    author: effective('author'),
    origin: effective('origin'),
    phase: effective('phase'),
    render,
    index,
  };
}

const byBytes = (a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** Answers the streams of one case (an array of Buffers). */
function readCase(buffers) {
  const results = buffers.map((bytes) => {
    const split = splitStream(bytes);
    // A refused stream is answered with the reading of the lines before the
    // one refused, when they start with a header (the kit does not compare it).
    const headed = split.lines.length > 0 && str(split.lines[0].value.get('type')) === 'session';
    const read = headed ? readLines(split.lines) : null;
    return split.refused ? { refused: split.refused, read } : { read };
  });
  const present = results.filter((r) => !r.refused && r.read.own).map((r) => r.read.own);
  return results.map((r) => {
    const read = r.read;
    let answer;
    if (r.refused) {
      const d = r.refused;
      answer = { valid: false, diagnostics: [{ rule: d.rule, severity: 'error', line: d.line, message: d.message }] };
      if (!read) return answer;
    } else {
      answer = { valid: true, diagnostics: [] };
    }
    const unresolved = [];
    const seen = new Set();
    for (const s of read.sessions) {
      if (present.some((p) => sameSession(p, s))) continue;
      const c = canonicalRef(s);
      if (seen.has(c)) continue;
      seen.add(c);
      unresolved.push(c);
    }
    unresolved.sort(byBytes);
    answer.reading = {
      session: { root: read.root, unresolved },
      records: read.records,
      totals: read.totals,
    };
    return answer;
  });
}

// ---------------------------------------------------------------------------
// Output: JSON written by hand, so record ids such as "__proto__" stay members.
// ---------------------------------------------------------------------------

function toJson(v) {
  if (v === null || typeof v === 'boolean' || typeof v === 'number') return JSON.stringify(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(toJson).join(',') + ']';
  const keys = Object.keys(v);
  return '{' + keys.map((k) => JSON.stringify(k) + ':' + toJson(v[k])).join(',') + '}';
}

function started() {
  return {
    type: 'started',
    protocol: 1,
    implementation: IMPLEMENTATION,
    roles: ['reader'],
    formatVersions: ['0.1'],
    capabilities: ['streams-by-path'],
  };
}

function answerCase(req) {
  const seq = req.seq;
  if (req.role !== 'reader') {
    return { type: 'skipped', seq, reason: `this adapter plays only the reader role, not ${req.role}` };
  }
  const buffers = [];
  for (const s of req.streams) {
    if (typeof s.data === 'string') buffers.push(Buffer.from(s.data, 'base64'));
    else buffers.push(fs.readFileSync(s.path));
  }
  return { type: 'answered', seq, streams: readCase(buffers) };
}

// ---------------------------------------------------------------------------
// Persistent mode: requests on stdin, one per line; seq echoed by its text.
// ---------------------------------------------------------------------------

/** The reply as JSON, its seq written as the request's text. */
function withSeq(reply, seqText) {
  const { type, seq, ...rest } = reply;
  const body = toJson(rest);
  return '{"type":' + JSON.stringify(type) + ',"seq":' + seqText + (body === '{}' ? '}' : ',' + body.slice(1));
}

function persistent() {
  let pending = Buffer.alloc(0);
  const write = (text) => process.stdout.write(text + '\n');
  const handle = (line) => {
    if (line.trim() === '') return;
    let req;
    try {
      req = JSON.parse(line);
    } catch (e) {
      process.stderr.write(`request is not JSON: ${e.message}\n`);
      return;
    }
    if (req.type === 'start') {
      write(toJson(started()));
    } else if (req.type === 'case') {
      // The kit's seq is echoed from its source text, exactly (it may be
      // beyond 2^53, which a double would round).
      let seqText = String(req.seq);
      try {
        const seq = parseJson(line).get('seq');
        if (seq instanceof JsonNumber) seqText = seq.text;
      } catch {
        // JSON.parse read it: keep its number.
      }
      let reply;
      try {
        reply = answerCase(req);
      } catch (e) {
        reply = { type: 'error', message: String((e && e.stack) || e) };
      }
      write(withSeq(reply, seqText));
    } else if (req.type === 'stop') {
      // Exit once every answer written has been flushed.
      process.stdout.write('', () => process.exit(0));
    }
  };
  process.stdin.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    let nl;
    while ((nl = pending.indexOf(0x0a)) >= 0) {
      const line = pending.subarray(0, nl).toString('utf8');
      pending = pending.subarray(nl + 1);
      handle(line);
    }
  });
  process.stdin.on('end', () => process.stdout.write('', () => process.exit(0)));
}

// ---------------------------------------------------------------------------
// One-shot mode: the handshake, or one case's stream on stdin.
// ---------------------------------------------------------------------------

function oneshot() {
  if (process.env.ASR_CTK_HANDSHAKE === '1') {
    process.stdout.write(toJson(started()) + '\n');
    return;
  }
  const role = process.env.ASR_CTK_ROLE;
  if (role !== 'reader') {
    process.stdout.write(toJson({ type: 'skipped', reason: `this adapter plays only the reader role, not ${role}` }) + '\n');
    return;
  }
  let reply;
  try {
    const bytes = fs.readFileSync(0);
    reply = { type: 'answered', streams: readCase([bytes]) };
  } catch (e) {
    reply = { type: 'error', message: String((e && e.stack) || e) };
  }
  process.stdout.write(toJson(reply) + '\n');
}

if (require.main === module) {
  if (process.env.ASR_CTK_HANDSHAKE === '1' || process.env.ASR_CTK_ROLE) oneshot();
  else persistent();
}

module.exports = { parseJson, compareNumbers, parseSessionRef, canonicalRef, readCase };
