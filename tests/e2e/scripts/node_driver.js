// The Node.js driver against ginkgodb serve: prints one JSON object of results for the pytest side.
const { MongoClient } = require('mongodb');

async function outcome(promise) {
  try { await promise; return null; } catch (e) {
    return { name: e.name, code: e.code, codeName: e.codeName,
             inserted: e.result ? e.result.insertedCount : undefined,
             writeErrors: e.writeErrors ? e.writeErrors.length : undefined };
  }
}

async function main(uri) {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  await client.connect();
  const out = {};
  const admin = client.db('admin');
  out.ping = await admin.command({ ping: 1 });
  out.version = (await admin.command({ buildInfo: 1 })).version;
  const db = client.db('e2e_node');
  await db.dropDatabase();
  const c = db.collection('things');
  await c.insertOne({ name: 'a', n: 1 });            // the driver appends _id last
  out.firstKey = Object.keys(await c.findOne({ name: 'a' }))[0];
  out.insertMany = (await c.insertMany(Array.from({ length: 2500 }, (_, i) => ({ i })))).insertedCount;
  out.count = await c.countDocuments({});
  out.updateMany = (await c.updateMany({ i: { $lt: 10 } }, { $set: { small: true } })).modifiedCount;
  out.deleteOne = (await c.deleteOne({ i: 0 })).deletedCount;
  out.top3 = (await c.find({ small: true }).sort({ i: -1 }).limit(3).toArray()).map(d => d.i);
  let n = 0;
  for await (const _ of c.find({}).batchSize(100)) n++;
  out.iterated = n;
  out.indexName = await c.createIndex({ i: 1 }, { unique: true });
  out.dup = await outcome(c.insertOne({ i: 5 }));
  out.bulk = await outcome(c.insertMany([{ i: 3 }, { i: 100000 }, { i: 4 }], { ordered: false }));
  const plan = await c.find({ i: 7 }).explain('executionStats');
  out.explainReturned = plan.executionStats.nReturned;
  out.explainPlan = JSON.stringify(plan.queryPlanner.winningPlan);
  out.aggregate = await c.aggregate([{ $match: { small: true } }, { $group: { _id: null, n: { $sum: 1 } } }]).toArray();
  out.unknown = await outcome(admin.command({ nope: 1 }));
  out.collections = (await db.listCollections().toArray()).map(x => x.name);
  const zlib = new MongoClient(uri, { serverSelectionTimeoutMS: 5000, compressors: ['zlib'] });
  out.zlibCount = (await zlib.db('e2e_node').collection('things').find({}).toArray()).length;
  await zlib.close();
  await client.close();                              // endSessions with moreToCome: no reply expected
  console.log(JSON.stringify(out));
}

main(process.argv[2]).catch(e => { console.error(e); process.exit(1); });
