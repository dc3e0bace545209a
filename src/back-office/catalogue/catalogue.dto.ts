import { IsBoolean } from 'class-validator';
import { IsIdentifier, OptionalNullable } from '../../infrastructure/http/field-rules';
import { IsAccountFieldNames, IsDisplayName, IsPositiveAmount } from '../http/validators';

export class PutProductDto {
  @IsDisplayName()
  name!: string;
}

export const DEFAULT_ROUTE = 'default';

export class PutSkuDto {
  @IsIdentifier()
  product_id!: string;

  @IsDisplayName()
  name!: string;

  @IsAccountFieldNames()
  required_account_fields!: string[];

  @IsBoolean({ message: 'supports_account_check must be true or false' })
  supports_account_check!: boolean;

  @IsBoolean({ message: 'on_shelf must be true or false' })
  on_shelf!: boolean;

  /** Absent: "default". Null: no upstream route, so orders for the SKU are refused with ROUTE_UNAVAILABLE. */
  @OptionalNullable()
  @IsIdentifier()
  route?: string | null;
}

export class PutPriceDto {
  @IsPositiveAmount()
  price!: string;
}
