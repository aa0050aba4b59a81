// The Node.js driver against a replica set of three: discovery with ?replicaSet=, a w: majority
// write, reads with secondaryPreferred and with a tag set, and which member answered each.
const { MongoClient, ReadPreference } = require('mongodb');

(async () => {
  const uri = process.argv[2];
  const client = new MongoClient(uri, { monitorCommands: true, retryWrites: false });
  const answered = {};
  client.on('commandStarted', e => { if (e.commandName === 'find') answered[e.requestId] = e.address; });
  await client.connect();
  const coll = client.db('e2e_node_multi').collection('things');
  await coll.deleteMany({}, { writeConcern: { w: 'majority' } });
  await coll.insertOne({ _id: 1 }, { writeConcern: { w: 'majority', wtimeoutMS: 10000 } });
  const addresses = [];
  const read = async pref => {
    const before = Object.keys(answered).length;
    let doc = null;
    for (let i = 0; i < 50 && !doc; i++) {
      doc = await coll.findOne({ _id: 1 }, { readPreference: pref });
      if (!doc) await new Promise(r => setTimeout(r, 100));
    }
    addresses.push(Object.values(answered).slice(-1)[0]);
    return doc;
  };
  const secondaryDoc = await read(ReadPreference.SECONDARY_PREFERRED);
  const westDoc = await read(new ReadPreference('secondary', [{ dc: 'west' }]));
  const desc = client.topology.description;
  const servers = [...desc.servers.values()].map(s => ({ address: s.address, type: s.type, tags: s.tags }));
  console.log(JSON.stringify({ type: desc.type, servers, secondaryDoc, westDoc, addresses }));
  await client.close();
})().catch(e => { console.error(e); process.exit(1); });
