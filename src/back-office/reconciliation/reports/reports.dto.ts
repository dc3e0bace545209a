import { IsInstant } from '../requery/requery.dto';

/** A report to fetch from the upstream: the window [from, to) of completions. */
export class FetchReportDto {
  @IsInstant()
  from!: string;

  @IsInstant()
  to!: string;
}
