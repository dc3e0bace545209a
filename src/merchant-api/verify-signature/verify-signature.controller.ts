import { Controller, HttpCode, Post } from '@nestjs/common';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { Merchant, MerchantRequest } from '../gateway/merchant-request';
import { V2_ROUTES } from '../routes.public';

/**
 * The signing self-check: what the service computed for this request, line
 * by line, and whether it matched. It never shows the expected signature
 * and consumes no nonce (the gateway skips both for this route).
 */
@Controller()
export class VerifySignatureController {
  @Post(V2_ROUTES.verifySignature)
  @HttpCode(200)
  verify(@Merchant() request: MerchantRequest) {
    const { timestamp, nonce, path, signatureMatches, timestampWithinTolerance } = request.signing;
    const body = request.rawBody.toString('utf8');
    const lines = [timestamp, nonce, path, body];
    return successEnvelope('OK', {
      string_to_sign_lines: lines,
      string_to_sign: lines.join('\n'),
      signature_matches: signatureMatches,
      timestamp_within_tolerance: timestampWithinTolerance,
    });
  }
}
