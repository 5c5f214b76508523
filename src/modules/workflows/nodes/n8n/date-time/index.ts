import { dateTimeV1Node } from './v1.js';
import { dateTimeV2Node } from './v2.js';

/** n8n's Date & Time, v1 (moment-style action/format) and v2 (Luxon operations). */
export const n8nDateTimeNodes = [dateTimeV1Node, dateTimeV2Node];
