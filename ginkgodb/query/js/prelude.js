// The global environment of a ginkgodb JavaScript sandbox: the BSON types mongod's server-side
// JavaScript exposes (ObjectId, NumberLong, NumberInt, NumberDecimal, BinData, Timestamp, DBRef,
// MinKey, MaxKey, Code), emit() for mapReduce, and the helpers the host calls to pass documents
// in and values out. Values cross the boundary as JSON in which a BSON value JSON cannot hold is
// an object {"\u0000": tag, "v": ...}; "\u0000" can never be a BSON field name.
"use strict";
(function (global) {
    var T = "\u0000";

    function ObjectId(hex) {
        if (!(this instanceof ObjectId)) return new ObjectId(hex);
        if (hex === undefined) throw new Error("ObjectId() needs a 24-character hex string here");
        if (typeof hex !== "string" || !/^[0-9a-fA-F]{24}$/.test(hex))
            throw new Error("invalid object id: length");
        this.str = hex.toLowerCase();
    }
    ObjectId.prototype.toString = function () { return 'ObjectId("' + this.str + '")'; };
    ObjectId.prototype.tojson = ObjectId.prototype.toString;
    ObjectId.prototype.valueOf = function () { return this.str; };
    ObjectId.prototype.equals = function (o) { return o instanceof ObjectId && o.str === this.str; };
    ObjectId.prototype.getTimestamp = function () { return new Date(parseInt(this.str.slice(0, 8), 16) * 1000); };

    function NumberLong(v) {
        if (!(this instanceof NumberLong)) return new NumberLong(v);
        this.__s = v === undefined ? "0" : String(typeof v === "number" ? Math.trunc(v) : v);
        this.floatApprox = Number(this.__s);
    }
    NumberLong.prototype.valueOf = function () { return this.floatApprox; };
    NumberLong.prototype.toNumber = NumberLong.prototype.valueOf;
    NumberLong.prototype.toString = function () { return "NumberLong(" + (Math.abs(this.floatApprox) < 9007199254740992 ? this.__s : '"' + this.__s + '"') + ")"; };
    NumberLong.prototype.tojson = NumberLong.prototype.toString;
    NumberLong.prototype.compare = function (o) { var a = BigInt(this.__s), b = BigInt(o instanceof NumberLong ? o.__s : Math.trunc(o)); return a < b ? -1 : a > b ? 1 : 0; };

    function NumberInt(v) {
        if (!(this instanceof NumberInt)) return new NumberInt(v);
        this.__v = (v === undefined ? 0 : Number(v)) | 0;
    }
    NumberInt.prototype.valueOf = function () { return this.__v; };
    NumberInt.prototype.toNumber = NumberInt.prototype.valueOf;
    NumberInt.prototype.toString = function () { return "NumberInt(" + this.__v + ")"; };
    NumberInt.prototype.tojson = NumberInt.prototype.toString;

    function NumberDecimal(v) {
        if (!(this instanceof NumberDecimal)) return new NumberDecimal(v);
        this.__s = v === undefined ? "0" : String(v);
    }
    NumberDecimal.prototype.valueOf = function () { return Number(this.__s); };
    NumberDecimal.prototype.toString = function () { return 'NumberDecimal("' + this.__s + '")'; };
    NumberDecimal.prototype.tojson = NumberDecimal.prototype.toString;

    function BinData(subtype, base64) {
        if (!(this instanceof BinData)) return new BinData(subtype, base64);
        this.__t = subtype; this.__b = base64;
    }
    var B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    function b64bytes(s) {
        var out = [], bits = 0, n = 0;
        for (var i = 0; i < s.length; i++) {
            var c = B64.indexOf(s.charAt(i));
            if (c < 0) continue;
            bits = (bits << 6) | c; n += 6;
            if (n >= 8) { n -= 8; out.push((bits >> n) & 255); }
        }
        return out;
    }
    BinData.prototype.subtype = function () { return this.__t; };
    BinData.prototype.base64 = function () { return this.__b; };
    BinData.prototype.length = function () { return b64bytes(this.__b).length; };
    BinData.prototype.hex = function () { return b64bytes(this.__b).map(function (b) { return (b < 16 ? "0" : "") + b.toString(16); }).join(""); };
    BinData.prototype.toString = function () { return 'BinData(' + this.__t + ',"' + this.__b + '")'; };
    BinData.prototype.tojson = BinData.prototype.toString;

    function Timestamp(t, i) {
        if (!(this instanceof Timestamp)) return new Timestamp(t, i);
        this.t = t || 0; this.i = i || 0;
    }
    Timestamp.prototype.getTime = function () { return this.t; };
    Timestamp.prototype.getInc = function () { return this.i; };
    Timestamp.prototype.toString = function () { return "Timestamp(" + this.t + ", " + this.i + ")"; };
    Timestamp.prototype.tojson = Timestamp.prototype.toString;

    function DBRef(ref, id, db) {
        if (!(this instanceof DBRef)) return new DBRef(ref, id, db);
        this.$ref = ref; this.$id = id;
        if (db !== undefined && db !== null) this.$db = db;
    }
    DBRef.prototype.getCollection = function () { return this.$ref; };
    DBRef.prototype.getId = function () { return this.$id; };
    DBRef.prototype.getDb = function () { return this.$db; };

    function Code(code) {
        if (!(this instanceof Code)) return new Code(code);
        this.code = String(code);
    }
    Code.prototype.toString = function () { return this.code; };

    var MinKey = { toString: function () { return "MinKey"; }, tojson: function () { return "{ \"$minKey\" : 1 }"; } };
    var MaxKey = { toString: function () { return "MaxKey"; }, tojson: function () { return "{ \"$maxKey\" : 1 }"; } };

    function tojson(v) {
        if (v !== null && typeof v === "object" && typeof v.tojson === "function") return v.tojson();
        return JSON.stringify(v);
    }

    // ---- values in: revive the tagged JSON the host wrote ------------------------------------
    function revive(key, v) {
        if (v === null || typeof v !== "object" || !(T in v)) return v;
        var x = v.v;
        switch (v[T]) {
            case "oid": var o = Object.create(ObjectId.prototype); o.str = x; return o;  // hex from the host
            case "date": return new Date(x);
            case "long": return new NumberLong(x);
            case "dec": return new NumberDecimal(x);
            case "bin": return new BinData(x[0], x[1]);
            case "re": return new RegExp(x[0], x[1]);
            case "ts": return new Timestamp(x[0], x[1]);
            case "ref": return x.length > 2 ? new DBRef(x[0], x[1], x[2]) : new DBRef(x[0], x[1]);
            case "min": return MinKey;
            case "max": return MaxKey;
            case "code": return new Code(x);
            case "num": return Number(x);
            case "undef": return undefined;
        }
        return v;
    }
    function load(s) { return JSON.parse(s, revive); }
    function fix(v) {
        if (v === null || typeof v !== "object") return v;
        if (T in v) return revive("", v.v !== null && typeof v.v === "object" && v[T] === "ref" ? fixRef(v) : v);
        if (Array.isArray(v)) { for (var i = 0; i < v.length; i++) v[i] = fix(v[i]); return v; }
        for (var k in v) v[k] = fix(v[k]);
        return v;
    }
    function fixRef(v) { v.v[1] = fix(v.v[1]); return v; }
    function loadDoc(s, tagged) {  // a document whose tagged values are in the named fields only
        var d = JSON.parse(s);
        if (tagged) { var ks = tagged.split(T); for (var i = 0; i < ks.length; i++) d[ks[i]] = fix(d[ks[i]]); }
        return d;
    }

    // ---- values out: tag what JSON cannot hold -----------------------------------------------
    function tag(t, v) { var o = {}; o[T] = t; o.v = v; return o; }
    function out(v, depth) {
        if (depth > 150) throw new RangeError("Object nesting too deep");
        if (v === undefined) return tag("undef", null);
        if (v === null || typeof v === "boolean" || typeof v === "string") return v;
        if (typeof v === "number") {
            if (v !== v || v === Infinity || v === -Infinity || (v === 0 && 1 / v < 0)) return tag("num", v === 0 ? "-0" : String(v));
            return v;
        }
        if (typeof v === "bigint") return tag("long", v.toString());
        if (typeof v === "function") return tag("code", v.toString());
        if (typeof v === "symbol") return v.toString();
        if (v instanceof Date) return tag("date", v.getTime());
        if (v instanceof RegExp) return tag("re", [v.source, v.flags]);
        if (v instanceof ObjectId) return tag("oid", v.str);
        if (v instanceof NumberLong) return tag("long", v.__s);
        if (v instanceof NumberInt) return tag("int", v.__v);
        if (v instanceof NumberDecimal) return tag("dec", v.__s);
        if (v instanceof BinData) return tag("bin", [v.__t, v.__b]);
        if (v instanceof Timestamp) return tag("ts", [v.t, v.i]);
        if (v instanceof Code) return tag("code", v.code);
        if (v === MinKey) return tag("min", 1);
        if (v === MaxKey) return tag("max", 1);
        if (v instanceof DBRef) return tag("ref", v.$db === undefined ? [v.$ref, out(v.$id, depth + 1)] : [v.$ref, out(v.$id, depth + 1), v.$db]);
        if (Array.isArray(v)) {
            var a = new Array(v.length);
            for (var i = 0; i < v.length; i++) a[i] = out(v[i], depth + 1);
            return a;
        }
        var o = {};
        for (var k in v) {
            if (Object.prototype.hasOwnProperty.call(v, k) && typeof v[k] !== "function") o[k] = out(v[k], depth + 1);
        }
        return o;
    }
    function dump(v) { return JSON.stringify(out(v, 0)); }

    // ---- the host's entry points -------------------------------------------------------------
    var fns = [];
    function __compile(src) {
        var f;
        try { f = (0, eval)("(" + src + "\n)"); } catch (e) { f = undefined; }
        if (typeof f !== "function") {
            // not a function: an expression, or statements whose last value is the result
            try {
                f = new Function("return (" + src + "\n);");
            } catch (e) {
                new Function(src);  // a syntax error here is the compile error
                f = new Function("return eval(" + JSON.stringify(src) + ");");
            }
        }
        fns.push(f);
        return fns.length - 1;
    }
    function __where(id, doc, tagged) {
        var d = loadDoc(doc, tagged);
        global.obj = d;
        return fns[id].call(d) ? true : false;
    }
    function __call(id, thisDoc, args) {
        var self = thisDoc === null ? null : load(thisDoc);
        return dump(fns[id].apply(self, load(args)));
    }
    var emitted = [];
    function emit(k, v) {
        if (arguments.length !== 2) throw new Error("emit takes 2 args");
        emitted.push([k, v]);
    }
    function __map(id, docs, tagged) {
        var ds = JSON.parse(docs), ts = JSON.parse(tagged), f = fns[id];
        emitted = [];
        for (var i = 0; i < ds.length; i++) {
            var d = ds[i];
            if (ts[i]) { var ks = ts[i].split(T); for (var j = 0; j < ks.length; j++) d[ks[j]] = fix(d[ks[j]]); }
            f.call(d);
        }
        var r = emitted;
        emitted = [];
        return dump(r);
    }
    function __scope(vars) {
        var s = load(vars);
        for (var k in s) if (Object.prototype.hasOwnProperty.call(s, k)) global[k] = s[k];
    }
    var names = { ObjectId: ObjectId, NumberLong: NumberLong, NumberInt: NumberInt,
                  NumberDecimal: NumberDecimal, BinData: BinData, Timestamp: Timestamp, DBRef: DBRef,
                  Code: Code, MinKey: MinKey, MaxKey: MaxKey, tojson: tojson, emit: emit,
                  __compile: __compile, __where: __where, __call: __call, __map: __map, __scope: __scope };
    for (var n in names) global[n] = names[n];
    if (!Array.sum) Array.sum = function (a) { var t = 0; for (var i = 0; i < a.length; i++) t += a[i]; return t; };
    if (!Array.avg) Array.avg = function (a) { return a.length ? Array.sum(a) / a.length : undefined; };
})(globalThis);
