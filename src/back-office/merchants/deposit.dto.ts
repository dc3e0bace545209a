import { IsPositiveAmount, IsReference } from '../http/validators';

export class DepositDto {
  @IsPositiveAmount()
  amount!: string;

  @IsReference()
  reference!: string;
}
