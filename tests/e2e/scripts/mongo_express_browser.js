// mongo-express in headless Chromium through playwright-core: visits and edits as a person would and
// prints one JSON object {pages: [...], checks: {...}} for the pytest side (test_e2e_mongo_express.py).
// Usage: node mongo_express_browser.js BASE_URL DB COLLECTION OTHER_COLLECTION DELETE_NAME SCREENSHOT_DIR USER_DATA_DIR
const path = require('path');
const { chromium } = require('playwright-core');

const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
// What a page shows when the server or mongo-express failed: Express's error page, a stack trace,
// the driver's error names, or mongo-express's own error flash.
const ERROR_TEXT = /Internal Server Error|MongoServerError|MongoError|TypeError|ReferenceError|Something went wrong|not found!|\n\s+at .+\(.+:\d+:\d+\)/;

async function main([base, dbName, collName, otherColl, deleteName, shotDir, userDataDir]) {
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] || await context.newPage();
  const pages = [];
  const checks = {};
  let lastStatus = null;
  page.on('response', (r) => {
    if (r.request().isNavigationRequest() && r.frame() === page.mainFrame()) lastStatus = r.status();
  });
  const consoleErrors = [];
  page.on('pageerror', (e) => consoleErrors.push(String(e)));

  async function record(name, { fullPage = true } = {}) {
    await page.waitForLoadState('load');
    const text = await page.innerText('body');
    const flashError = await page.$$eval('.alert-danger', (els) => els.map((e) => e.innerText.trim()));
    const shot = path.join(shotDir, `${String(pages.length + 1).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path: shot, fullPage });
    const match = text.match(ERROR_TEXT);
    pages.push({ name, url: page.url(), status: lastStatus, title: await page.title(), screenshot: shot,
                 flashError, errorText: match ? match[0] : null, success: await flash('.alert-success') });
    return text;
  }
  async function flash(selector) {
    return page.$$eval(selector, (els) => els.map((e) => e.innerText.replace('×', '').trim()));
  }
  async function submitting(action) {
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), action()]);
  }
  async function setEditor(selector, value) {
    // CodeMirror replaces the textarea; type into the editor the way a user's paste would.
    await page.$eval(selector, (el, v) => el.nextElementSibling.CodeMirror.setValue(v), value);
  }
  const collUrl = `${base}db/${dbName}/${collName}`;

  // 1. databases
  await page.goto(base);
  let text = await record('databases');
  checks.databaseListed = text.includes(dbName);

  // 2. collections of the database
  await submitting(() => page.click(`td h3 a[href$="db/${dbName}/"]`));
  text = await record('collections');
  checks.collectionListed = text.includes(collName);

  // 3. the collection: documents, stats and indexes
  await submitting(() => page.click(`td h3 a[href$="db/${dbName}/${collName}"]`));
  text = await record('collection');
  checks.rowsShown = await page.$$eval('table.tableHeaderFooterBars tr[onclick]', (rows) => rows.length);
  checks.indexes = await page.$$eval('#indexes tr td:first-child', (tds) => tds.map((t) => t.innerText.trim()));
  checks.indexAttributes = await page.$$eval('#indexes tr td:nth-child(4)', (tds) => tds.map((t) => t.innerText.replace(/\s+/g, ' ').trim()));
  await page.locator('#indexes').scrollIntoViewIfNeeded();
  await record('indexes', { fullPage: false });

  // 4. add a document through the "New Document" dialog
  await page.click('button[data-target="#addDocument"]');
  await page.waitForSelector('#addDocument', { state: 'visible' });
  await setEditor('#document', '{\n  "name": "added-in-browser",\n  "price": 7.5,\n  "tags": ["gui"]\n}');
  await submitting(() => page.click('#addDocumentForm button[type="submit"]'));
  text = await record('document-added');
  checks.addedFlash = pages[pages.length - 1].success;

  // 5. a simple query (key/value) finds it; open it by clicking its row
  await page.fill('#simple #key', 'name');
  await page.fill('#simple #value', 'added-in-browser');
  await submitting(() => page.click('#simple button[type="submit"]'));
  text = await record('simple-query');
  checks.simpleQueryRows = await page.$$eval('table.tableHeaderFooterBars tr[onclick]', (rows) => rows.length);
  await submitting(() => page.click('table.tableHeaderFooterBars tr[onclick] td:nth-child(2)'));
  text = await record('document-view');
  checks.documentShown = text.includes('added-in-browser');

  // 6. edit it in the document editor and save
  const current = await page.$eval('#document', (el) => el.nextElementSibling.CodeMirror.getValue());
  checks.editorBefore = current;
  await setEditor('#document', current.replace('7.5', '8.25').replace(/(['"])gui\1/, "'gui', 'edited'"));
  await submitting(() => page.click('#documentEditForm button[type="submit"]'));
  text = await record('document-saved');
  checks.savedFlash = pages[pages.length - 1].success;

  // 7. an advanced query with a projection
  await page.goto(collUrl);
  await page.click('#tabs a[href="#advanced"]');
  await page.fill('#advanced #query', '{ "price": { "$gte": 30 } }');
  await page.fill('#advanced #projection', '{ "name": 1, "_id": 0 }');
  await submitting(() => page.click('#advanced button[type="submit"]'));
  text = await record('advanced-query');
  checks.advancedRows = await page.$$eval('table.tableHeaderFooterBars tr[onclick]', (rows) => rows.length);
  checks.advancedColumns = await page.$$eval('table.tableHeaderFooterBars th', (ths) => ths.map((t) => t.innerText.trim()));

  // 7b. the same form as an aggregation pipeline (mongo-express pages it with $facet)
  await page.goto(collUrl);
  await page.click('#tabs a[href="#advanced"]');
  await page.fill('#advanced #query', '[{ "$match": { "tags": "b" } }, { "$sort": { "price": -1 } }]');
  await page.fill('#advanced #projection', '{ "name": 1, "price": 1, "_id": 0 }');
  await page.check('#runAggregate');
  await submitting(() => page.click('#advanced button[type="submit"]'));
  await record('aggregate-query');
  checks.aggregateNames = await page.$$eval('table.tableHeaderFooterBars tr[onclick] td:first-child',
    (tds) => tds.map((t) => t.innerText.trim()));
  checks.aggregateTotal = (await page.innerText('#deleteListForm')).trim();

  // 7c. exports, as the Tools buttons download them
  for (const kind of ['export', 'expArr', 'expCsv']) {
    const reply = await page.request.get(`${base}db/${dbName}/${kind}/${collName}`);
    checks[kind] = { status: reply.status(), type: reply.headers()['content-type'], bytes: (await reply.body()).length,
                     lines: (await reply.text()).trim().split('\n').length };
  }

  // 8. delete another document from its own page
  await page.goto(`${collUrl}?key=name&value=${deleteName}&type=S`);
  await submitting(() => page.click('table.tableHeaderFooterBars tr[onclick] td:nth-child(2)'));
  await submitting(() => page.click('.deleteButtonDocument'));
  await record('document-deleted');
  checks.deletedFlash = pages[pages.length - 1].success;

  // 9. create an index from the "New Index" dialog and see it listed
  await page.click('button[data-target="#addIndex"]');
  await page.waitForSelector('#addIndex', { state: 'visible' });
  await setEditor('#index', '{\n  "tags": 1,\n  "price": -1\n}');
  await submitting(() => page.click('#addIndexForm button[type="submit"]'));
  await page.locator('#indexes').scrollIntoViewIfNeeded();
  await record('index-added', { fullPage: false });
  checks.indexesAfterAdd = await page.$$eval('#indexes tr td:first-child', (tds) => tds.map((t) => t.innerText.trim()));

  // 10. rename another collection, then delete it through the confirmation dialog
  await page.goto(`${base}db/${dbName}/${otherColl}`);
  await page.fill('input#collection', `${otherColl}_renamed`);
  await submitting(() => page.click('form:has(input#collection) button[type="submit"]'));
  await record('collection-renamed');
  checks.renamedFlash = pages[pages.length - 1].success;
  await page.click('.deleteButtonCollection');
  await page.waitForSelector('#confirm-deletion-collection', { state: 'visible' });
  await page.fill('#confirmation-input', `${otherColl}_renamed`);
  await submitting(() => page.click('#confirm-deletion-collection #delete'));
  await record('collection-deleted');
  checks.collectionDeletedFlash = pages[pages.length - 1].success;

  // 11. the Compact button of the Tools (runs the `compact` command); kept apart from `pages`
  await page.goto(collUrl);
  await submitting(() => page.click(`a[href$="compact/${collName}"]`));
  await page.waitForLoadState('load');
  checks.compact = { status: lastStatus, success: await flash('.alert-success'), error: await flash('.alert-danger') };
  await page.screenshot({ path: path.join(shotDir, `${String(pages.length + 1).padStart(2, '0')}-compact.png`), fullPage: false });

  checks.consoleErrors = consoleErrors;
  await context.close();
  console.log(JSON.stringify({ pages, checks }));
}

main(process.argv.slice(2)).catch((e) => { console.error(e); process.exit(1); });
