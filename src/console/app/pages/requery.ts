import { api, segment } from '../api';
import { link, pill, row } from '../components/bits';
import { errorBox } from '../components/feedback';
import { time } from '../components/format';
import { filterWords } from '../components/reconciliation-words';
import { named } from '../components/names';
import { table } from '../components/table';
import { h } from '../dom';
import { hashWith, params } from '../navigation';
import type { ListPage, RequeryJobSummaryView } from '../replies';
import { reconciliationTabs } from './reconciliation-tabs';
import { requeryJobPage } from './requery-job';

/** `#/requery`: the bulk re-query jobs, newest first; `#/requery/{job_id}`: one job. */
export async function requeryPage(main: HTMLElement, jobId: string) {
  if (jobId) return requeryJobPage(main, jobId);
  main.append(
    h('h1', {}, 'Re-query jobs'),
    reconciliationTabs('requery'),
    h('p', { class: 'muted' }, 'A job asks the upstream again about many orders of the queue at once; start one from the queue.'),
  );
  const cursor = params().get('cursor');
  const reply = await api<ListPage<'jobs', RequeryJobSummaryView>>(
    'GET',
    `/admin/v1/reconciliation/requery?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
  );
  if (!reply.ok) return main.append(errorBox(reply));
  main.append(
    table(
      [
        ['Job', (j) => link(`#/requery/${segment(j.job_id)}`, j.job_id)],
        ['Status', (j) => pill(j.status)],
        ['Orders', (j) => filterWords(j.filter)],
        ['Asked', (j) => `${j.done} of ${j.total}`, 'num'],
        ['Started by', (j) => named(j.requested_by_name, j.requested_by)],
        ['Started', (j) => time(j.created_at)],
      ],
      reply.data.jobs,
      'No job yet.',
    ),
    row(reply.data.next_cursor !== null && link(hashWith('requery', { cursor: reply.data.next_cursor }), 'Next page →')),
  );
}
