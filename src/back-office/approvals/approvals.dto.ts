import { IsString, Length } from 'class-validator';

/** An approval or a rejection: why, kept in the decision's event. */
export class ApprovalDecisionDto {
  @IsString()
  @Length(1, 1000, { message: 'note must be 1-1000 characters' })
  note!: string;
}
