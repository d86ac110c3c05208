export { ApiError, NetworkError, UnexpectedResponseError, headerValue } from './errors.js';
export type { ResponseHeaders } from './errors.js';
export { HttpClient, buildQuery, retryAfterMs, DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS } from './http.js';
export type {
  AuthProvider,
  HttpClientOptions,
  HttpResponse,
  RawBody,
  RequestMethod,
  RequestOptions,
  RetryInfo,
} from './http.js';
export { call, callRaw, callWithResponse, contractEndpoint, createApi, fillPath, isRawOnlyEndpoint } from './contract-client.js';
export type {
  Api,
  ApiMethod,
  CallOptions,
  CallResult,
  EndpointGroup,
  EndpointGroups,
  IsRawOnly,
} from './contract-client.js';
export { detectPage, paginateCursor, paginateItems, paginatePages, paginateRaw } from './paginate.js';
export type { CursorPageOptions, DetectedPage, Page, PageInfo, PaginateOptions } from './paginate.js';
