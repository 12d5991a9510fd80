import { Browser, CHROMIUM } from "./test/browser.ts";
const b = await Browser.launch(CHROMIUM!);
const o = await b.open(process.argv[2]!);
await o.page.click(".trow >> nth=3").catch(e=>console.log("click", e.message));
await o.page.screenshot({ path: process.argv[3]!, fullPage: true });
console.log(JSON.stringify({req:o.requests, d:o.dialogs, e:o.errors, v:o.violations}));
await b.close();
