// `npm run discovery-report`: the ranking's hit rates on the labelled tasks (wallet/discovery/labelled-tasks.json),
// against the catalog and registry shipped in the repo, and the tasks it misses.
import { Catalog } from '../registry/catalog.js';
import { Registry } from '../registry/registry.js';
import { hitRates, labelledTasks } from './evaluate.js';
import { offeringsOf, rank } from './rank.js';

const registry = Registry.shipped();
const offerings = offeringsOf(new Catalog(registry), registry);
const tasks = labelledTasks();
const { at1, at3, misses } = await hitRates(tasks, async (task) => rank(offerings, { task, limit: 10 }, Date.now(), () => []));
console.log(`${tasks.length} labelled tasks, ${offerings.length} offerings: hit rate at 1 ${(at1 * 100).toFixed(1)} %, at 3 ${(at3 * 100).toFixed(1)} %`);
for (const miss of misses) console.log(`  missed: "${miss.task}" wanted ${miss.expected}, got ${miss.got.join(', ') || 'nothing'}`);
