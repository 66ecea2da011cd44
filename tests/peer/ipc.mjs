// Arrow IPC decoding for the lancekeeper peer driver.
//
// Lance hands query results and schemas over as Arrow IPC bytes. apache-arrow JS
// cannot decode every type Lance produces (large_list, for one) and turns float
// values into JS numbers, so this module walks the IPC flatbuffers itself (using
// apache-arrow's generated flatbuffer accessors) and renders:
//
//   * schemas as the corpus notation (see lance-corpus/README.md "Type strings"),
//   * values as JSON that keeps every bit: floats as hex bit patterns, 64-bit
//     integers, temporal values and decimals as decimal strings, binary as hex.
//
// Value encoding (per Arrow type):
//   null (any type)            null
//   bool                       true / false
//   int8..int32, uint8..uint32 JSON number
//   int64, uint64              decimal string
//   float16/32/64              {"f16":"0x7e00"} / {"f32":"0x7fc00000"} / {"f64":"0x7ff8000000000000"}
//   decimal128/256             decimal string with exactly `scale` fraction digits ("-1.50")
//   date32/64, time32/64,
//   timestamp, duration        raw stored integer as decimal string
//   interval                   {"interval_hex": "<little-endian bytes>"}
//   utf8, large_utf8           JSON string ({"invalid_utf8_hex": ...} if not UTF-8)
//   binary, large_binary,
//   fixed_size_binary          lowercase hex string
//   list, large_list,
//   fixed_size_list            JSON array
//   struct                     JSON object {child name: value}
//   map                        JSON array of {"key": k, "value": v} (entry field names)
//   dictionary                 the decoded dictionary value
//
// makeIpc(require) takes a require function that resolves the peer's installed
// modules, so that this file has no import-time dependency on them.

const TIME_UNITS = ["s", "ms", "us", "ns"];
const CONTINUATION = 0xffffffff;

export class IpcError extends Error {}

export function makeIpc(require) {
  const flatbuffers = require("flatbuffers");
  const fb = (name) => require(`apache-arrow/fb/${name}`);
  const { Message } = fb("message");
  const { MessageHeader } = fb("message-header");
  const { Schema } = fb("schema");
  const { RecordBatch } = fb("record-batch");
  const { DictionaryBatch } = fb("dictionary-batch");
  const { Footer } = fb("footer");
  const { Type } = fb("type");
  const { Int } = fb("int");
  const { FloatingPoint } = fb("floating-point");
  const { Decimal } = fb("decimal");
  const { Date: FbDate } = fb("date");
  const { Time } = fb("time");
  const { Timestamp } = fb("timestamp");
  const { Duration } = fb("duration");
  const { Interval } = fb("interval");
  const { FixedSizeBinary } = fb("fixed-size-binary");
  const { FixedSizeList } = fb("fixed-size-list");
  const { Map: FbMap } = fb("map");

  // ---------------------------------------------------------------- types

  // describeType returns a plain object describing an IPC Field's type:
  // {id, name (corpus type string), ...parameters}. Dictionary-encoded fields
  // are described by their value type plus a `dict` entry.
  function describeType(field) {
    const tt = field.typeType();
    const children = [];
    for (let i = 0; i < field.childrenLength(); i++) children.push(field.children(i));
    const childDescs = children.map(describeField);
    let t;
    switch (tt) {
      case Type.Null:
        t = { id: "null", name: "null" };
        break;
      case Type.Int: {
        const x = field.type(new Int());
        const bw = x.bitWidth();
        const signed = x.isSigned();
        t = { id: "int", bitWidth: bw, signed, name: `${signed ? "int" : "uint"}${bw}` };
        break;
      }
      case Type.FloatingPoint: {
        const p = field.type(new FloatingPoint()).precision();
        const bw = [16, 32, 64][p];
        if (bw === undefined) throw new IpcError(`field ${field.name()}: unknown float precision ${p}`);
        t = { id: "float", bitWidth: bw, name: `float${bw}` };
        break;
      }
      case Type.Binary:
        t = { id: "binary", large: false, name: "binary" };
        break;
      case Type.LargeBinary:
        t = { id: "binary", large: true, name: "large_binary" };
        break;
      case Type.Utf8:
        t = { id: "utf8", large: false, name: "utf8" };
        break;
      case Type.LargeUtf8:
        t = { id: "utf8", large: true, name: "large_utf8" };
        break;
      case Type.Bool:
        t = { id: "bool", name: "bool" };
        break;
      case Type.Decimal: {
        const x = field.type(new Decimal());
        const bw = x.bitWidth();
        t = {
          id: "decimal",
          bitWidth: bw,
          precision: x.precision(),
          scale: x.scale(),
          name: `decimal${bw}(${x.precision()}, ${x.scale()})`,
        };
        break;
      }
      case Type.Date: {
        const unit = field.type(new FbDate()).unit();
        t = unit === 0 ? { id: "int", temporal: true, bitWidth: 32, signed: true, name: "date32" }
                       : { id: "int", temporal: true, bitWidth: 64, signed: true, name: "date64" };
        break;
      }
      case Type.Time: {
        const x = field.type(new Time());
        const bw = x.bitWidth();
        t = { id: "int", temporal: true, bitWidth: bw, signed: true, name: `time${bw}[${TIME_UNITS[x.unit()]}]` };
        break;
      }
      case Type.Timestamp: {
        const x = field.type(new Timestamp());
        const tz = x.timezone();
        const unit = TIME_UNITS[x.unit()];
        t = {
          id: "int", temporal: true, bitWidth: 64, signed: true,
          name: tz ? `timestamp[${unit}, tz=${tz}]` : `timestamp[${unit}]`,
        };
        break;
      }
      case Type.Duration: {
        const unit = TIME_UNITS[field.type(new Duration()).unit()];
        t = { id: "int", temporal: true, bitWidth: 64, signed: true, name: `duration[${unit}]` };
        break;
      }
      case Type.Interval: {
        const unit = field.type(new Interval()).unit();
        const names = ["year_month", "day_time", "month_day_nano"];
        const widths = [4, 8, 16];
        t = { id: "interval", byteWidth: widths[unit], name: `interval[${names[unit]}]` };
        break;
      }
      case Type.FixedSizeBinary: {
        const w = field.type(new FixedSizeBinary()).byteWidth();
        t = { id: "fixed_size_binary", byteWidth: w, name: `fixed_size_binary[${w}]` };
        break;
      }
      case Type.List:
      case Type.LargeList: {
        if (childDescs.length !== 1) throw new IpcError(`field ${field.name()}: list with ${childDescs.length} children`);
        const large = tt === Type.LargeList;
        t = { id: "list", large, name: `${large ? "large_list" : "list"}<${childDescs[0].type.name}>` };
        break;
      }
      case Type.FixedSizeList: {
        if (childDescs.length !== 1) throw new IpcError(`field ${field.name()}: fixed_size_list with ${childDescs.length} children`);
        const n = field.type(new FixedSizeList()).listSize();
        t = { id: "fixed_size_list", size: n, name: `fixed_size_list<${childDescs[0].type.name}>[${n}]` };
        break;
      }
      case Type.Struct_:
        t = { id: "struct", name: `struct<${childDescs.map((c) => `${c.name}: ${c.type.name}`).join(", ")}>` };
        break;
      case Type.Map: {
        const entries = childDescs[0];
        if (childDescs.length !== 1 || entries.type.id !== "struct" || entries.children.length !== 2) {
          throw new IpcError(`field ${field.name()}: malformed map`);
        }
        field.type(new FbMap());
        t = { id: "map", name: `map<${entries.children[0].type.name}, ${entries.children[1].type.name}>` };
        break;
      }
      default:
        t = { id: "unsupported", name: `unsupported(${Type[tt] ?? tt})` };
    }
    t.children = childDescs;
    return t;
  }

  function metadataOf(obj) {
    const out = {};
    const n = obj.customMetadataLength();
    const pairs = [];
    for (let i = 0; i < n; i++) {
      const kv = obj.customMetadata(i);
      pairs.push([kv.key() ?? "", kv.value() ?? ""]);
    }
    pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [k, v] of pairs) out[k] = v;
    return out;
  }

  // describeField returns {name, nullable, type, metadata, children, dict?}.
  function describeField(field) {
    const valueType = describeType(field);
    const d = {
      name: field.name() ?? "",
      nullable: field.nullable(),
      metadata: metadataOf(field),
      children: valueType.children,
      valueType,
      type: valueType,
    };
    const de = field.dictionary();
    if (de) {
      const it = de.indexType();
      const bw = it ? it.bitWidth() : 32;
      const signed = it ? it.isSigned() : true;
      const indexName = `${signed ? "int" : "uint"}${bw}`;
      d.dict = { id: Number(de.id()), ordered: de.isOrdered(), indexType: { id: "int", bitWidth: bw, signed, name: indexName } };
      d.type = { id: "dictionary", name: `dictionary<${indexName}, ${valueType.name}>`, children: [] };
    }
    return d;
  }

  // fieldJSON renders a described field in the corpus expect.json notation.
  function fieldJSON(d) {
    const o = { name: d.name, type: d.type.name, nullable: d.nullable };
    if (Object.keys(d.metadata).length > 0) o.metadata = d.metadata;
    if (d.dict) {
      o.dictionary = { index_type: d.dict.indexType.name, ordered: d.dict.ordered, id: d.dict.id };
      o.value_type = d.valueType.name;
    }
    if (d.children.length > 0) o.children = d.children.map(fieldJSON);
    return o;
  }

  // ---------------------------------------------------------------- messages

  function readMessageAt(bytes, off) {
    if (off + 4 > bytes.length) return null;
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let len = dv.getUint32(off, true);
    let p = off + 4;
    if (len === CONTINUATION) {
      if (p + 4 > bytes.length) throw new IpcError(`truncated IPC message length at ${p}`);
      len = dv.getUint32(p, true);
      p += 4;
    }
    if (len === 0) return null; // end-of-stream marker
    if (p + len > bytes.length) throw new IpcError(`IPC message at ${off} claims ${len} metadata bytes, ${bytes.length - p} available`);
    const meta = bytes.subarray(p, p + len);
    const msg = Message.getRootAsMessage(new flatbuffers.ByteBuffer(meta));
    const bodyStart = p + len;
    const bodyLen = Number(msg.bodyLength());
    if (bodyStart + bodyLen > bytes.length) throw new IpcError(`IPC message at ${off} claims ${bodyLen} body bytes, ${bytes.length - bodyStart} available`);
    return { msg, body: bytes.subarray(bodyStart, bodyStart + bodyLen), next: bodyStart + bodyLen };
  }

  function isFile(bytes) {
    return bytes.length >= 6 && Buffer.from(bytes.subarray(0, 6)).toString("latin1") === "ARROW1";
  }

  // messages returns the IPC messages of a stream or file, in order.
  function messages(bytes) {
    bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const out = [];
    if (isFile(bytes)) {
      const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      if (bytes.length < 18) throw new IpcError("IPC file too short");
      const flen = dv.getInt32(bytes.length - 10, true);
      const fstart = bytes.length - 10 - flen;
      if (flen <= 0 || fstart < 8) throw new IpcError(`IPC file footer length ${flen} is invalid`);
      const footer = Footer.getRootAsFooter(new flatbuffers.ByteBuffer(bytes.subarray(fstart, fstart + flen)));
      const schema = footer.schema();
      if (!schema) throw new IpcError("IPC file footer has no schema");
      out.push({ kind: "schema", schema });
      for (let i = 0; i < footer.dictionariesLength(); i++) {
        const m = readMessageAt(bytes, Number(footer.dictionaries(i).offset()));
        if (m) out.push(wrap(m));
      }
      for (let i = 0; i < footer.recordBatchesLength(); i++) {
        const m = readMessageAt(bytes, Number(footer.recordBatches(i).offset()));
        if (m) out.push(wrap(m));
      }
      return out;
    }
    let off = 0;
    for (;;) {
      const m = readMessageAt(bytes, off);
      if (!m) break;
      out.push(wrap(m));
      off = m.next;
    }
    return out;
  }

  function wrap(m) {
    switch (m.msg.headerType()) {
      case MessageHeader.Schema:
        return { kind: "schema", schema: m.msg.header(new Schema()) };
      case MessageHeader.RecordBatch:
        return { kind: "batch", batch: m.msg.header(new RecordBatch()), body: m.body };
      case MessageHeader.DictionaryBatch:
        return { kind: "dictionary", dict: m.msg.header(new DictionaryBatch()), body: m.body };
      default:
        throw new IpcError(`unsupported IPC message type ${m.msg.headerType()}`);
    }
  }

  function describeSchema(schema) {
    if (schema.endianness() !== 0) throw new IpcError("big-endian IPC is not supported");
    const fields = [];
    for (let i = 0; i < schema.fieldsLength(); i++) fields.push(describeField(schema.fields(i)));
    return { fields, metadata: metadataOf(schema) };
  }

  function schemaJSON(desc) {
    return { fields: desc.fields.map(fieldJSON), metadata: desc.metadata };
  }

  // ---------------------------------------------------------------- values

  const hex = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString("hex");
  const utf8 = new TextDecoder("utf-8", { fatal: true });

  function decodeUtf8(u8) {
    try {
      return utf8.decode(u8);
    } catch {
      return { invalid_utf8_hex: hex(u8) };
    }
  }

  function formatDecimal(v, scale) {
    const neg = v < 0n;
    let s = (neg ? -v : v).toString();
    if (scale > 0) {
      if (s.length <= scale) s = "0".repeat(scale - s.length + 1) + s;
      s = `${s.slice(0, s.length - scale)}.${s.slice(s.length - scale)}`;
    } else if (scale < 0) {
      s = v === 0n ? "0" : s + "0".repeat(-scale);
    }
    return neg ? `-${s}` : s;
  }

  // A batch reader hands out field nodes and buffers in depth-first order.
  class BatchCursor {
    constructor(batch, body) {
      if (batch.compression()) throw new IpcError("compressed IPC record batches are not supported");
      this.batch = batch;
      this.body = body;
      this.node = 0;
      this.buf = 0;
    }
    nextNode() {
      if (this.node >= this.batch.nodesLength()) throw new IpcError("IPC record batch has too few field nodes");
      const n = this.batch.nodes(this.node++);
      return { length: Number(n.length()), nullCount: Number(n.nullCount()) };
    }
    nextBuffer() {
      if (this.buf >= this.batch.buffersLength()) throw new IpcError("IPC record batch has too few buffers");
      const b = this.batch.buffers(this.buf++);
      const off = Number(b.offset());
      const len = Number(b.length());
      if (off + len > this.body.length) throw new IpcError(`IPC buffer ${this.buf - 1} [${off}, +${len}) exceeds body of ${this.body.length} bytes`);
      return this.body.subarray(off, off + len);
    }
  }

  function dataView(u8) {
    return new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  }

  function validityOf(u8, node) {
    if (node.nullCount === 0 || u8.length === 0) return () => true;
    return (i) => ((u8[i >> 3] >> (i & 7)) & 1) === 1;
  }

  // column decodes one array (type description `t`) at the cursor and returns
  // a function i -> JSON value.
  function column(d, cur, dictionaries, isDictField = true) {
    if (isDictField && d.dict) {
      const node = cur.nextNode();
      const valid = validityOf(cur.nextBuffer(), node);
      const idx = intReader(d.dict.indexType, cur.nextBuffer());
      const dict = dictionaries.get(d.dict.id);
      if (!dict) throw new IpcError(`field ${d.name}: dictionary ${d.dict.id} not present`);
      return (i) => {
        if (!valid(i)) return null;
        const k = Number(idx(i));
        if (k < 0 || k >= dict.length) throw new IpcError(`field ${d.name}: dictionary index ${k} out of range ${dict.length}`);
        return dict[k];
      };
    }
    const t = d.valueType;
    switch (t.id) {
      case "null": {
        cur.nextNode();
        return () => null;
      }
      case "bool": {
        const node = cur.nextNode();
        const valid = validityOf(cur.nextBuffer(), node);
        const data = cur.nextBuffer();
        return (i) => (valid(i) ? ((data[i >> 3] >> (i & 7)) & 1) === 1 : null);
      }
      case "int": {
        const node = cur.nextNode();
        const valid = validityOf(cur.nextBuffer(), node);
        const rd = intReader(t, cur.nextBuffer());
        const asString = t.temporal || t.bitWidth === 64;
        return (i) => {
          if (!valid(i)) return null;
          const v = rd(i);
          return asString ? v.toString() : v;
        };
      }
      case "float": {
        const node = cur.nextNode();
        const valid = validityOf(cur.nextBuffer(), node);
        const dv = dataView(cur.nextBuffer());
        if (t.bitWidth === 16) return (i) => (valid(i) ? { f16: `0x${dv.getUint16(i * 2, true).toString(16).padStart(4, "0")}` } : null);
        if (t.bitWidth === 32) return (i) => (valid(i) ? { f32: `0x${dv.getUint32(i * 4, true).toString(16).padStart(8, "0")}` } : null);
        return (i) => (valid(i) ? { f64: `0x${dv.getBigUint64(i * 8, true).toString(16).padStart(16, "0")}` } : null);
      }
      case "decimal": {
        const node = cur.nextNode();
        const valid = validityOf(cur.nextBuffer(), node);
        const data = cur.nextBuffer();
        const w = t.bitWidth / 8;
        return (i) => {
          if (!valid(i)) return null;
          let v = 0n;
          for (let b = w - 1; b >= 0; b--) v = (v << 8n) | BigInt(data[i * w + b]);
          if (data[i * w + w - 1] & 0x80) v -= 1n << BigInt(t.bitWidth);
          return formatDecimal(v, t.scale);
        };
      }
      case "interval":
      case "fixed_size_binary": {
        const node = cur.nextNode();
        const valid = validityOf(cur.nextBuffer(), node);
        const data = cur.nextBuffer();
        const w = t.byteWidth;
        if (t.id === "interval") return (i) => (valid(i) ? { interval_hex: hex(data.subarray(i * w, (i + 1) * w)) } : null);
        return (i) => (valid(i) ? hex(data.subarray(i * w, (i + 1) * w)) : null);
      }
      case "binary":
      case "utf8": {
        const node = cur.nextNode();
        const valid = validityOf(cur.nextBuffer(), node);
        const offs = offsetReader(t.large, cur.nextBuffer());
        const data = cur.nextBuffer();
        const conv = t.id === "utf8" ? decodeUtf8 : hex;
        return (i) => (valid(i) ? conv(data.subarray(offs(i), offs(i + 1))) : null);
      }
      case "list":
      case "map": {
        const node = cur.nextNode();
        const valid = validityOf(cur.nextBuffer(), node);
        const offs = offsetReader(t.id === "list" && t.large, cur.nextBuffer());
        const child = column(d.children[0], cur, dictionaries);
        return (i) => {
          if (!valid(i)) return null;
          const out = [];
          for (let j = offs(i); j < offs(i + 1); j++) out.push(child(j));
          return out;
        };
      }
      case "fixed_size_list": {
        const node = cur.nextNode();
        const valid = validityOf(cur.nextBuffer(), node);
        const child = column(d.children[0], cur, dictionaries);
        const n = t.size;
        return (i) => {
          if (!valid(i)) return null;
          const out = [];
          for (let j = i * n; j < (i + 1) * n; j++) out.push(child(j));
          return out;
        };
      }
      case "struct": {
        const node = cur.nextNode();
        const valid = validityOf(cur.nextBuffer(), node);
        const kids = d.children.map((c) => [c.name, column(c, cur, dictionaries)]);
        return (i) => {
          if (!valid(i)) return null;
          const o = {};
          for (const [name, get] of kids) o[name] = get(i);
          return o;
        };
      }
      default:
        throw new IpcError(`field ${d.name}: cannot decode values of type ${t.name}`);
    }
  }

  function intReader(t, u8) {
    const dv = dataView(u8);
    switch (t.bitWidth) {
      case 8: return t.signed ? (i) => dv.getInt8(i) : (i) => dv.getUint8(i);
      case 16: return t.signed ? (i) => dv.getInt16(i * 2, true) : (i) => dv.getUint16(i * 2, true);
      case 32: return t.signed ? (i) => dv.getInt32(i * 4, true) : (i) => dv.getUint32(i * 4, true);
      case 64: return t.signed ? (i) => dv.getBigInt64(i * 8, true) : (i) => dv.getBigUint64(i * 8, true);
      default: throw new IpcError(`unsupported integer width ${t.bitWidth}`);
    }
  }

  function offsetReader(large, u8) {
    const dv = dataView(u8);
    return large ? (i) => Number(dv.getBigInt64(i * 8, true)) : (i) => dv.getInt32(i * 4, true);
  }

  // decode parses IPC bytes (stream or file) into
  // {schema: described schema, columns: [[JSON values of column c]...], numRows}.
  // Several buffers can be decoded into one result by passing `into`.
  function decode(bytes, into = null) {
    const res = into ?? { schema: null, columns: null, numRows: 0, dictionaries: new Map() };
    let schemaDesc = null;
    for (const m of messages(bytes)) {
      if (m.kind === "schema") {
        schemaDesc = describeSchema(m.schema);
        if (!res.schema) {
          res.schema = schemaDesc;
          res.columns = schemaDesc.fields.map(() => []);
        } else if (JSON.stringify(schemaJSON(res.schema)) !== JSON.stringify(schemaJSON(schemaDesc))) {
          throw new IpcError("IPC buffers disagree on the schema");
        }
        res.dictionaries = new Map();
      } else if (m.kind === "dictionary") {
        if (!schemaDesc) throw new IpcError("dictionary batch before schema");
        const id = Number(m.dict.id());
        const fieldDesc = findDictField(schemaDesc.fields, id);
        if (!fieldDesc) throw new IpcError(`dictionary batch for unknown id ${id}`);
        const cur = new BatchCursor(m.dict.data(), m.body);
        const n = Number(m.dict.data().length());
        const get = column(fieldDesc, cur, res.dictionaries, false);
        const vals = [];
        for (let i = 0; i < n; i++) vals.push(get(i));
        const prev = m.dict.isDelta() ? res.dictionaries.get(id) ?? [] : [];
        res.dictionaries.set(id, prev.concat(vals));
      } else {
        if (!schemaDesc) throw new IpcError("record batch before schema");
        const cur = new BatchCursor(m.batch, m.body);
        const n = Number(m.batch.length());
        const getters = schemaDesc.fields.map((f) => column(f, cur, res.dictionaries));
        for (let c = 0; c < getters.length; c++) {
          const col = res.columns[c];
          for (let i = 0; i < n; i++) col.push(getters[c](i));
        }
        res.numRows += n;
      }
    }
    return res;
  }

  function findDictField(fields, id) {
    for (const f of fields) {
      if (f.dict && f.dict.id === id) return f;
      const c = findDictField(f.children, id);
      if (c) return c;
    }
    return null;
  }

  // schemaFromIpc returns the corpus-notation schema of IPC bytes.
  function schemaFromIpc(bytes) {
    for (const m of messages(bytes)) {
      if (m.kind === "schema") return schemaJSON(describeSchema(m.schema));
    }
    throw new IpcError("IPC data has no schema message");
  }

  return { decode, schemaJSON, schemaFromIpc, formatDecimal };
}
