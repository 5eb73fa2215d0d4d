export { uWS, assertNativeUws } from './uws.js';
export type { TemplatedApp, UwsRequest, UwsResponse } from './uws.js';
export {
  Router,
  createRouter,
  listen,
  type HttpRequest,
  type Handler,
  type RequestHook,
  type ResponseHook,
  type RouterOptions,
  type RouteOptions,
  type CorsOptions,
  type Listening,
} from './router.js';
export {
  HttpError,
  JSON_CONTENT_TYPE,
  json,
  redirect,
  httpError,
  errorBody,
  reasonPhrase,
  type HttpResponse,
  type ErrorBody,
  type HeaderValue,
} from './response.js';
export { queryList, queryObject } from './query.js';
