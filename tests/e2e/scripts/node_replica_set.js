// The Node.js driver against a replica set of one: discovery with ?replicaSet=, the streaming
// monitor (no failed heartbeat), reads and writes, a forced step-down seen by the monitor.
const { MongoClient } = require('mongodb');

(async () => {
  const uri = process.argv[2];
  const client = new MongoClient(uri, { heartbeatFrequencyMS: 500, retryWrites: false });
  const heartbeats = { succeeded: 0, awaited: 0, failed: [] };
  client.on('serverHeartbeatSucceeded', e => { heartbeats.succeeded++; if (e.awaited) heartbeats.awaited++; });
  client.on('serverHeartbeatFailed', e => heartbeats.failed.push(String(e.failure)));
  const types = [];
  client.on('topologyDescriptionChanged', e => types.push(e.newDescription.type));
  await client.connect();
  const coll = client.db('e2e_node_rs').collection('things');
  await coll.deleteMany({});
  await coll.insertOne({ _id: 1, n: 'one' });
  const found = await coll.findOne({ _id: 1 });
  const hello = await client.db('admin').command({ hello: 1 });
  await new Promise(r => setTimeout(r, 2000));
  const before = client.topology.description.type;
  await client.db('admin').command({ replSetStepDown: 1, force: true });
  const sawNoPrimary = await waitFor(() => client.topology.description.type === 'ReplicaSetNoPrimary', 3000);
  const backToPrimary = await waitFor(() => client.topology.description.type === 'ReplicaSetWithPrimary', 6000);
  const servers = [...client.topology.description.servers.values()].map(s => s.type);
  console.log(JSON.stringify({ found, setName: hello.setName, primary: hello.isWritablePrimary, before,
                               sawNoPrimary, backToPrimary, servers, heartbeats }));
  await client.close();
})().catch(e => { console.error(e); process.exit(1); });

async function waitFor(predicate, ms) {
  const until = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > until) return false;
    await new Promise(r => setTimeout(r, 20));
  }
  return true;
}
