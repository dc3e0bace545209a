import { IsString, Length } from 'class-validator';
import { Doc, Optional } from '../../infrastructure/http/field-rules';
import { IsPositiveAmount, IsReference } from '../http/validators';

export class DepositFundsDto {
  @IsPositiveAmount()
  amount!: string;

  @IsReference()
  reference!: string;

  @Doc({ description: 'Why, for the approver when the four-eyes rule asks for one' })
  @Optional()
  @IsString()
  @Length(1, 1000, { message: 'note must be 1-1000 characters' })
  note?: string;
}
