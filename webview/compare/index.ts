import { connectToExtension, readInitialState } from '../common/bridge';
import { CompareNotifications, type CompareInitialState } from '../../src/rerun/compareMessages';
import './compare-view';

// Entry of the comparison panel: the view is embedded in the HTML; a later rerun replaces it.

const initialState = readInitialState<CompareInitialState>();
const view = document.createElement('empo2-compare-view');
view.view = initialState.view;
document.body.append(view);

const extension = connectToExtension();
extension.onNotification(CompareNotifications.show, ({ view: next }) => (view.view = next));
extension.signalReady();
