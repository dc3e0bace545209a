import { IsBoolean } from 'class-validator';
import { Doc, IsIdentifier, OptionalNullable } from '../../infrastructure/http/field-rules';
import { IsAccountFieldNames, IsDisplayName, IsPositiveAmount } from '../http/validators';

export class PutProductDto {
  @Doc({ examples: ['Mobile Legends'] })
  @IsDisplayName()
  name!: string;
}

export const DEFAULT_ROUTE = 'default';

export class PutSkuDto {
  @Doc({ examples: ['mlbb'] })
  @IsIdentifier()
  product_id!: string;

  @Doc({ examples: ['86 Diamonds'] })
  @IsDisplayName()
  name!: string;

  @IsAccountFieldNames()
  required_account_fields!: string[];

  @IsBoolean({ message: 'supports_account_check must be true or false' })
  supports_account_check!: boolean;

  @IsBoolean({ message: 'on_shelf must be true or false' })
  on_shelf!: boolean;

  @Doc({ description: 'The upstream route; absent: "default"; null: none, so orders for the SKU are refused with ROUTE_UNAVAILABLE', examples: ['default'] })
  @OptionalNullable()
  @IsIdentifier()
  route?: string | null;
}

export class PutPriceDto {
  @Doc({ examples: ['1.20'] })
  @IsPositiveAmount()
  price!: string;
}
