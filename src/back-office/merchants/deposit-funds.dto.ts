import { IsPositiveAmount, IsReference } from '../http/validators';

export class DepositFundsDto {
  @IsPositiveAmount()
  amount!: string;

  @IsReference()
  reference!: string;
}
