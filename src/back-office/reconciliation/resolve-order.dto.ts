import { IsIn, IsString, Length } from 'class-validator';

export class ResolveOrderDto {
  @IsIn(['success', 'failed'], { message: 'outcome must be "success" or "failed"' })
  outcome!: 'success' | 'failed';

  /** Why: kept in the resolution event for auditors. */
  @IsString()
  @Length(1, 1000, { message: 'note must be 1-1000 characters' })
  note!: string;
}
