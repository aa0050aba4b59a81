// Mongoose against ginkgodb serve: runs every step, records its result or its error, and prints one
// JSON object {step: {value} | {error}} for the pytest side to assert on (test_e2e_mongoose.py).
const mongoose = require('mongoose');
const { Readable } = require('stream');

const { Schema } = mongoose;
const out = {};

function describe(e) {
  return {
    name: e.name, code: e.code, codeName: e.codeName, message: String(e.message).slice(0, 300),
    kind: e.kind, path: e.path,
    errors: e.errors ? Object.fromEntries(Object.entries(e.errors).map(([k, v]) => [k, v.kind])) : undefined,
    keyValue: e.keyValue,
  };
}

async function step(name, fn) {
  try {
    out[name] = { value: await fn() };
  } catch (e) {
    out[name] = { error: describe(e) };
  }
}

const plain = (x) => JSON.parse(JSON.stringify(x));

const authorSchema = new Schema({
  name: { type: String, required: true, unique: true, maxlength: 40 },
  email: { type: String, match: /^[^@]+@[^@]+$/ },
  age: { type: Number, min: 0 },
  country: String,
}, { toJSON: { virtuals: true }, toObject: { virtuals: true } });
authorSchema.index({ country: 1, age: -1 });
authorSchema.virtual('books', { ref: 'Book', localField: '_id', foreignField: 'author' });

const chapterSchema = new Schema({ title: String, words: Number }, { _id: false });

const bookSchema = new Schema({
  title: { type: String, required: true },
  author: { type: Schema.Types.ObjectId, ref: 'Author', required: true },
  reviewers: [{ type: Schema.Types.ObjectId, ref: 'Author' }],
  tags: [String],
  chapters: [chapterSchema],
  pages: { type: Number, default: 0 },
  status: { type: String, enum: ['draft', 'published'], default: 'draft' },
  createdAt: { type: Date, default: Date.now, expires: 3600 },
});
bookSchema.index({ author: 1, pages: -1 });
bookSchema.pre('save', function titleCase() {
  this.title = this.title.charAt(0).toUpperCase() + this.title.slice(1);
});

async function main(uri, dbName) {
  await mongoose.connect(`${uri}/${dbName}`, { serverSelectionTimeoutMS: 5000, autoIndex: true });
  await mongoose.connection.dropDatabase();
  const Author = mongoose.model('Author', authorSchema);
  const Book = mongoose.model('Book', bookSchema);
  await Author.init();   // builds the declared indexes, as at application start-up
  await Book.init();

  await step('indexes', async () => ({
    author: await Author.collection.indexes(), book: await Book.collection.indexes(),
  }));

  const [ann, bob, cy] = await Author.create([
    { name: 'ann', email: 'ann@example.com', age: 30, country: 'fr' },
    { name: 'bob', age: 40, country: 'de' },
    { name: 'cy', age: 22, country: 'fr' },
  ]);
  await Book.create([
    { title: 'alpha', author: ann._id, reviewers: [bob._id, cy._id], tags: ['x', 'y'], pages: 100,
      chapters: [{ title: 'one', words: 10 }, { title: 'two', words: 20 }] },
    { title: 'beta', author: bob._id, reviewers: [ann._id], tags: ['y'], pages: 200, status: 'published' },
    { title: 'gamma', author: ann._id, tags: ['z'], pages: 50 },
  ]);

  // references
  await step('populate', async () => {
    const b = await Book.findOne({ title: 'Alpha' }).populate('author').populate('reviewers');
    return { author: b.author.name, reviewers: b.reviewers.map((r) => r.name) };
  });
  await step('populateSelectMatch', async () => {
    const b = await Book.findOne({ title: 'Alpha' })
      .populate({ path: 'reviewers', select: 'name -_id', match: { age: { $gte: 30 } } }).lean();
    return b.reviewers;
  });
  await step('populateVirtual', async () => {
    const a = await Author.findOne({ name: 'ann' }).populate({ path: 'books', options: { sort: { pages: 1 } } });
    return a.books.map((b) => b.title);
  });
  await step('documentPopulate', async () => {
    const b = await Book.findOne({ title: 'Beta' });
    await b.populate('author');
    return b.author.name;
  });

  // queries
  await step('sortSkipLimit', async () => (await Book.find().sort({ pages: -1 }).skip(1).limit(1)).map((b) => b.title));
  await step('selectInclude', async () => Object.keys(await Book.findOne({ title: 'Alpha' }).select('title pages').lean()).sort());
  await step('selectExclude', async () => Object.keys(await Book.findOne({ title: 'Alpha' }).select('-chapters -reviewers -__v').lean()).sort());
  await step('in', async () => Book.countDocuments({ tags: { $in: ['z', 'x'] } }));
  await step('regex', async () => (await Book.find({ title: /^(al|be)/i }).sort('title')).map((b) => b.title));
  await step('whereChain', async () => (await Book.find().where('pages').gte(60).lte(250).sort('pages')).map((b) => b.title));
  await step('countDocuments', async () => Book.countDocuments({ pages: { $gte: 100 } }));
  await step('estimatedDocumentCount', async () => Book.estimatedDocumentCount());
  await step('distinct', async () => (await Book.distinct('tags')).sort());
  await step('exists', async () => Boolean(await Book.exists({ status: 'published' })));
  await step('elemMatch', async () => Book.countDocuments({ chapters: { $elemMatch: { words: { $gt: 15 } } } }));
  await step('cursor', async () => {
    const titles = [];
    for await (const b of Book.find().sort('title').cursor({ batchSize: 1 })) titles.push(b.title);
    return titles;
  });
  await step('positionalProjection', async () => (await Book.findOne({ 'chapters.title': 'two' })
    .select({ 'chapters.$': 1 }).lean()).chapters);
  await step('castError', async () => Book.findById('not-an-id'));

  // atomic updates
  await step('incPushSet', async () => {
    const r = await Book.updateOne({ title: 'Alpha' }, { $inc: { pages: 5 }, $push: { tags: 'w' }, $set: { status: 'published' } });
    const b = await Book.findOne({ title: 'Alpha' }).lean();
    return { modified: r.modifiedCount, pages: b.pages, tags: b.tags, status: b.status };
  });
  await step('pull', async () => {
    await Book.updateOne({ title: 'Alpha' }, { $pull: { tags: 'x' } });
    return (await Book.findOne({ title: 'Alpha' }).lean()).tags;
  });
  await step('positionalUpdate', async () => {
    await Book.updateOne({ title: 'Alpha', 'chapters.title': 'two' }, { $inc: { 'chapters.$.words': 5 } });
    return (await Book.findOne({ title: 'Alpha' }).lean()).chapters;
  });
  await step('updateMany', async () => (await Book.updateMany({ author: ann._id }, { $addToSet: { tags: 'ann' } })).modifiedCount);
  await step('upsert', async () => {
    const r = await Author.updateOne({ name: 'dee' }, { $set: { age: 50 } }, { upsert: true });
    return { upserted: Boolean(r.upsertedId), age: (await Author.findOne({ name: 'dee' }).lean()).age };
  });
  await step('findOneAndUpdate', async () => {
    const a = await Author.findOneAndUpdate({ name: 'bob' }, { $inc: { age: 1 } }, { returnDocument: 'after' });
    return a.age;
  });
  await step('findOneAndUpdateUpsert', async () => {
    const a = await Author.findOneAndUpdate({ name: 'eve' }, { $setOnInsert: { age: 18 } },
      { returnDocument: 'after', upsert: true, lean: true });
    return { name: a.name, age: a.age };
  });
  await step('updateValidator', async () => Author.updateOne({ name: 'ann' }, { $set: { age: -5 } }, { runValidators: true }));
  await step('documentSave', async () => {
    const a = await Author.findOne({ name: 'cy' });
    a.age += 1;
    await a.save();
    return (await Author.findById(a._id).lean()).age;
  });
  await step('bulkWrite', async () => {
    const r = await Book.bulkWrite([
      { updateOne: { filter: { title: 'Gamma' }, update: { $inc: { pages: 1 } } } },
      { deleteOne: { filter: { title: 'Beta' } } },
      { insertOne: { document: { title: 'delta', author: cy._id } } },
    ]);
    return { modified: r.modifiedCount, deleted: r.deletedCount, inserted: r.insertedCount };
  });
  await step('findOneAndDelete', async () => (await Book.findOneAndDelete({ title: 'delta' })).title);

  await step('discriminator', async () => {
    const Event = mongoose.model('Event', new Schema({ at: Date }, { discriminatorKey: 'kind' }));
    const Click = Event.discriminator('Click', new Schema({ url: String }));
    await Click.create({ at: new Date(), url: '/a' });
    await Event.create({ at: new Date() });
    return { clicks: await Click.countDocuments(), events: await Event.countDocuments(),
             kind: (await Event.findOne({ url: '/a' }).lean()).kind };
  });
  await step('syncIndexes', async () => {
    await Author.collection.createIndex({ age: 1 }, { name: 'stray_age' });
    const dropped = await Author.syncIndexes();
    return { dropped, left: (await Author.collection.indexes()).map((i) => i.name).sort() };
  });

  await step('arrayFilters', async () => {
    await Book.updateOne({ title: 'Alpha' }, { $inc: { 'chapters.$[c].words': 100 } },
      { arrayFilters: [{ 'c.words': { $lt: 15 } }] });
    return (await Book.findOne({ title: 'Alpha' }).lean()).chapters.map((c) => c.words);
  });
  await step('pushEachSortSlice', async () => {
    await Book.updateOne({ title: 'Gamma' }, { $push: { tags: { $each: ['c', 'a', 'b'], $sort: 1, $slice: 3 } } });
    return (await Book.findOne({ title: 'Gamma' }).lean()).tags;
  });
  await step('findOneAndReplace', async () => {
    const r = await Author.findOneAndReplace({ name: 'dee' }, { name: 'dee', age: 51 }, { returnDocument: 'after', lean: true });
    return Object.keys(r).filter((k) => k !== '_id').sort().concat([r.age]);
  });
  await step('optimisticConcurrency', async () => {
    const Note = mongoose.model('Note', new Schema({ text: String, n: Number },
      { optimisticConcurrency: true, timestamps: true }));
    const created = await Note.create({ text: 'a', n: 1 });
    const first = await Note.findById(created._id);
    const second = await Note.findById(created._id);
    first.n = 2;
    await first.save();
    second.n = 3;
    let conflict = null;
    try { await second.save(); } catch (e) { conflict = { name: e.name }; }
    const stored = await Note.findById(created._id).lean();
    return { conflict, n: stored.n, version: stored.__v,
             timestamps: stored.createdAt instanceof Date && stored.updatedAt > stored.createdAt };
  });
  await step('cappedCollection', async () => {
    const Log = mongoose.model('Log', new Schema({ i: Number }, { capped: { size: 4096, max: 3 } }));
    await Log.init();
    for (let i = 0; i < 5; i++) await Log.create({ i });
    const opts = await mongoose.connection.db.listCollections({ name: 'logs' }).toArray();
    return { kept: (await Log.find().sort({ $natural: 1 }).lean()).map((d) => d.i),
             capped: opts[0].options.capped, max: opts[0].options.max };
  });
  await step('nestedPopulate', async () => {
    const a = await Author.findOne({ name: 'ann' })
      .populate({ path: 'books', options: { sort: { title: 1 } }, populate: { path: 'reviewers', select: 'name' } });
    return a.books.map((b) => [b.title, b.reviewers.map((r) => r.name)]);
  });
  await step('explain', async () => {
    const plan = await Author.find({ name: 'ann' }).explain('executionStats');
    const p = Array.isArray(plan) ? plan[0] : plan;
    return { returned: p.executionStats.nReturned, plan: JSON.stringify(p.queryPlanner.winningPlan).includes('IXSCAN') };
  });
  await step('collation', async () => (await Author.find({ name: 'ANN' }).collation({ locale: 'en', strength: 2 }).lean()).map((a) => a.name));

  // aggregation helpers
  await step('aggregateBuilder', async () => plain(await Book.aggregate()
    .match({ author: ann._id }).unwind('tags').group({ _id: '$tags', n: { $sum: 1 } }).sort({ _id: 1 })));
  await step('aggregateFacet', async () => plain(await Book.aggregate()
    .facet({ byStatus: [{ $sortByCount: '$status' }], pages: [{ $group: { _id: null, total: { $sum: '$pages' } } }] })));
  await step('aggregateLookup', async () => plain(await Author.aggregate([
    { $match: { name: 'ann' } },
    { $lookup: { from: 'books', localField: '_id', foreignField: 'author', as: 'books' } },
    { $project: { _id: 0, name: 1, n: { $size: '$books' } } },
  ])));

  // validation and duplicate keys
  await step('validationError', async () => Author.create({ name: 'x'.repeat(50), email: 'nope', age: -1 }));
  await step('requiredError', async () => new Book({}).validate());
  await step('enumError', async () => Book.create({ title: 't', author: ann._id, status: 'lost' }));
  await step('duplicateKey', async () => Author.create({ name: 'ann' }));
  await step('insertManyUnordered', async () => {
    try {
      await Author.insertMany([{ name: 'ann' }, { name: 'fay' }, { name: 'bob' }], { ordered: false });
      return null;
    } catch (e) {
      return { name: e.name, code: e.code, inserted: e.insertedDocs ? e.insertedDocs.length : e.result.insertedCount,
               writeErrors: e.writeErrors.length };
    }
  });

  // GridFS through the driver that Mongoose carries
  await step('gridfs', async () => {
    const bucket = new mongoose.mongo.GridFSBucket(mongoose.connection.db, { bucketName: 'files', chunkSizeBytes: 1024 });
    const payload = Buffer.alloc(5000, 'ab');
    const upload = bucket.openUploadStream('blob.bin', { metadata: { owner: 'ann' } });
    await new Promise((resolve, reject) => Readable.from([payload]).pipe(upload).on('finish', resolve).on('error', reject));
    const files = await bucket.find({ filename: 'blob.bin' }).toArray();
    const chunksStored = await mongoose.connection.db.collection('files.chunks').countDocuments({ files_id: upload.id });
    const chunks = [];
    for await (const c of bucket.openDownloadStreamByName('blob.bin')) chunks.push(c);
    const back = Buffer.concat(chunks);
    await bucket.delete(upload.id);
    return {
      length: files[0].length, chunkSize: files[0].chunkSize, metadata: files[0].metadata,
      same: back.equals(payload), chunksStored, chunksAfterDelete: await mongoose.connection.db.collection('files.chunks').countDocuments(),
      filesAfterDelete: (await bucket.find({}).toArray()).length,
    };
  });

  await mongoose.disconnect();
  console.log(JSON.stringify(out));
}

main(process.argv[2], process.argv[3]).catch((e) => { console.error(e); process.exit(1); });
