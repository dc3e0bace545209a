import type { ApplyResult, AppliedView } from '../bulk-apply/bulk-apply.view';
import type { RequeryAnswer, RequeryProposal } from './requery-proposal';

/** The filter a job was started with, as given; `order_nos` is how many were listed (null: none). */
export interface RequeryFilterView {
  merchant_id: string | null;
  merchant_name: string | null;
  created_from: string | null;
  created_to: string | null;
  order_nos: number | null;
}

/** A bulk re-query job in a list: who started it, what it selected, and how far it got. */
export interface RequeryJobSummaryView {
  job_id: string;
  /** `running` while any of its orders waits for the upstream's answer. */
  status: 'running' | 'done';
  requested_by: string;
  requested_by_name: string | null;
  created_at: string;
  finished_at: string | null;
  filter: RequeryFilterView;
  total: number;
  done: number;
}

/** One order of a job: the upstream's answer once asked, the proposal it implies, and what a bulk apply did with it. */
export interface RequeryResultView {
  item: number;
  order_no: string;
  merchant_id: string;
  merchant_name: string | null;
  amount: string;
  currency: string;
  /** Null until asked; then `status` and whatever else the upstream said, as the single re-query shows it. */
  upstream: ({ status: RequeryAnswer } & Record<string, unknown>) | null;
  proposal: RequeryProposal | null;
  answered_at: string | null;
  applied: AppliedView | null;
}

/** A job with its counts and a page of its orders. */
export interface RequeryJobView extends RequeryJobSummaryView {
  /** The order_nos given that the filter did not select: not in the queue (or left out by the other filters). */
  not_in_queue: string[];
  upstream: Record<RequeryAnswer, number>;
  proposals: Record<RequeryProposal, number>;
  applied: Record<ApplyResult, number>;
  /** The page: orders with this proposal (null: all), how many there are, and the slice shown. */
  page: { proposal: RequeryProposal | null; total: number; limit: number; offset: number };
  results: RequeryResultView[];
}
